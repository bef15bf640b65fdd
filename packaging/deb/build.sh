#!/bin/sh
# Build the Debian package of gate from this source tree with dpkg-deb.
#
#   packaging/deb/build.sh [OUTDIR]
#
# Writes OUTDIR/gate_VERSION_ARCH.deb (OUTDIR defaults to target/debian, whose old
# gate_*.deb files are removed first) and prints its path as the last line. Needs cargo,
# a C toolchain with glibc's static library (Debian: build-essential), and dpkg-dev.
# Runs as any user: file ownership in the package is root's (dpkg-deb --root-owner-group).
# Why dpkg-deb and not cargo-deb, and what lintian says: packaging/deb/README.md.
set -eu

umask 022
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
outdir=${1:-$root/target/debian}
target_dir=${CARGO_TARGET_DIR:-$root/target}

die() {
    echo "build.sh: $*" >&2
    exit 1
}

for tool in cargo dpkg-deb dpkg-parsechangelog dpkg-query readelf strip gzip; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is needed and not installed"
done

# The version comes from the Debian changelog; its upstream part must be Cargo's.
version=$(dpkg-parsechangelog -l "$here/changelog" -S Version)
epoch=$(dpkg-parsechangelog -l "$here/changelog" -S Timestamp)
# So does the maintainer: the one who signed the newest entry is the one named in the
# control file, so the two cannot disagree.
maintainer=$(dpkg-parsechangelog -l "$here/changelog" -S Maintainer)
case $maintainer in
*" <"*@*">") ;;
*) die "packaging/deb/changelog's newest entry is signed '$maintainer', not 'Name <address>'" ;;
esac
cargo_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
[ "${version%-*}" = "$cargo_version" ] ||
    die "packaging/deb/changelog is at $version but Cargo.toml at $cargo_version; add a changelog entry"
arch=$(dpkg --print-architecture)
# Reproducible: every timestamp in the package is the changelog entry's.
SOURCE_DATE_EPOCH=$epoch
export SOURCE_DATE_EPOCH

# A statically linked release build, as `cargo build-static` (.cargo/config.toml) makes
# it: gate runs before every command, and a static binary skips the dynamic loader.
(cd "$root" && cargo rustc --locked --release --bin gate -- -C target-feature=+crt-static)
binary=$target_dir/release/gate
if readelf -lW "$binary" | grep -q 'program interpreter'; then
    die "$binary is not statically linked"
fi
# The package's Built-Using names the glibc whose static library is inside gate.
glibc=$(dpkg-query -W -f='${source:Package} (= ${source:Version})' libc6-dev)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/gate
doc=$pkg/usr/share/doc/gate

install -D -m 0755 "$binary" "$pkg/usr/bin/gate"
# Cargo strips symbols; drop the compiler notes too, as dh_strip does.
strip --remove-section=.comment --remove-section=.note "$pkg/usr/bin/gate"
# The shims: gate acts as the shell it is named after. Relative links, as Debian policy
# wants within /usr, so that an unpacked tree (dpkg -x) works as well.
install -d -m 0755 "$pkg/usr/lib/gate/bin"
for shell in bash sh zsh; do
    ln -s ../../../bin/gate "$pkg/usr/lib/gate/bin/$shell"
done
install -D -m 0644 "$root/packaging/config.toml" "$pkg/etc/gate/config.toml"
install -d -m 0755 "$pkg/usr/share/man/man1" "$pkg/usr/share/man/man5"
gzip -9n -c "$root/man/gate.1" >"$pkg/usr/share/man/man1/gate.1.gz"
gzip -9n -c "$root/man/gate.toml.5" >"$pkg/usr/share/man/man5/gate.toml.5.gz"
install -D -m 0644 "$root/completions/gate.bash" "$pkg/usr/share/bash-completion/completions/gate"
install -D -m 0644 "$root/completions/_gate" "$pkg/usr/share/zsh/vendor-completions/_gate"
install -D -m 0644 "$root/completions/gate.fish" "$pkg/usr/share/fish/vendor_completions.d/gate.fish"
install -D -m 0644 "$here/copyright" "$doc/copyright"
gzip -9n -c "$here/changelog" >"$doc/changelog.Debian.gz"
# The documentation, compressed as dh_compress would (files over 4 KiB).
install -m 0644 "$root/README.md" "$doc/README.md"
install -d -m 0755 "$doc/docs"
install -m 0644 "$root"/docs/*.md "$doc/docs/"
find "$doc" -name '*.md' -size +4k -exec gzip -9n {} +

install -d -m 0755 "$pkg/DEBIAN"
install -m 0755 "$here/postinst" "$here/postrm" "$pkg/DEBIAN/"
echo /etc/gate/config.toml >"$pkg/DEBIAN/conffiles"
chmod 0644 "$pkg/DEBIAN/conffiles"
(cd "$pkg" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' |
    LC_ALL=C sort -z | xargs -0 md5sum) >"$pkg/DEBIAN/md5sums"
chmod 0644 "$pkg/DEBIAN/md5sums"
size=$(du -s -k --apparent-size --exclude=DEBIAN "$pkg" | cut -f 1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
    -e "s/@BUILT_USING@/$glibc/" -e "s|@MAINTAINER@|$maintainer|" \
    "$here/control" >"$pkg/DEBIAN/control"
chmod 0644 "$pkg/DEBIAN/control"
find "$pkg" -exec touch -h -d "@$epoch" {} +

mkdir -p "$outdir"
rm -f "$outdir"/gate_*.deb
deb=$outdir/gate_${version}_$arch.deb
dpkg-deb --root-owner-group --build "$pkg" "$deb" >/dev/null
echo "$deb"
