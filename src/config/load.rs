//! Loading: finding and reading the configuration files (the system file and its
//! drop-ins, the user file and its drop-ins, the always-allow file), then the project
//! file, the variables and the options, and merging them. The only part of `config` that
//! touches the file system or the environment; what it reads it hands to the pure
//! readers ([`super::parse_file`], [`super::env_layer`], [`super::flag_layer`]) and to
//! [`super::merge()`].

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use super::{
    ALWAYS_FILE, ConfigError, FileKind, Layer, Settings, SystemPlaces, env_layer, flag_layer,
    merge, parse_file, user_drop_ins,
};
use crate::invocation::GateArgs;

/// What [`load`] reads from the process environment.
pub struct Environment<'a> {
    pub var: &'a dyn Fn(&str) -> Option<OsString>,
}

impl Environment<'_> {
    pub(crate) fn home(&self) -> Option<PathBuf> {
        crate::xdg::home(self.var)
    }

    fn user_config(&self) -> Option<PathBuf> {
        crate::xdg::config_home(self.var).map(|dir| dir.join("gate/config.toml"))
    }

    /// The always-allow file beside the default user file.
    pub(crate) fn always_file(&self) -> Option<PathBuf> {
        crate::xdg::config_home(self.var).map(|dir| dir.join("gate").join(ALWAYS_FILE))
    }
}

/// The most a configuration file may hold: 1 MiB. gate reads and parses its files before
/// every command, and 1 MiB is already tens of thousands of rules, far more than any
/// policy a person writes; a larger file is a mistake (a log or a binary named by
/// accident), and reading it whole would cost every command its time and memory.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Read a configuration file that may be absent (`Ok(None)`); any other failure is an
/// error that names the file. Only a regular file (or the null device, which reads as
/// empty) is read, and at most [`MAX_CONFIG_BYTES`] of it, so that no file can make gate
/// wait (a FIFO with no writer, a terminal) or grow without end (`/dev/zero`).
pub(super) fn read_optional(path: &Path) -> Result<Option<String>, ConfigError> {
    match open_optional(path, false)? {
        Some((file, size)) => read_whole(path, file, size).map(Some),
        None => Ok(None),
    }
}

/// A configuration file that may be absent, parsed: read a piece at a time where it is
/// larger than a piece and made only of rule lists (see [`super::lists::read_piecewise`]),
/// whole otherwise. The same layer, and the same errors, as [`read_optional`] and then
/// [`parse_file`].
fn read_layer(
    path: &Path,
    kind: FileKind,
    home: Option<&Path>,
) -> Result<Option<Layer>, ConfigError> {
    read_layer_checked(path, kind, home, false, || Ok(()))
}

/// [`read_layer`], with `check` run once the file is open, before it is read;
/// `regular`: a directory's listing said that the file is a regular one.
fn read_layer_checked(
    path: &Path,
    kind: FileKind,
    home: Option<&Path>,
    regular: bool,
    check: impl FnOnce() -> Result<(), ConfigError>,
) -> Result<Option<Layer>, ConfigError> {
    use std::io::Seek;

    let Some((mut file, size)) = open_optional(path, regular)? else {
        return Ok(None);
    };
    check()?;
    if size as usize > super::lists::PIECE {
        let cx = super::file::FileCx::new(path, "", kind, home);
        let max = MAX_CONFIG_BYTES as usize;
        match super::lists::read_piecewise(&cx, &mut file, size as usize, max) {
            Ok(Some(layer)) => return Ok(Some(layer)),
            // From the start, whole, to the TOML parser, which says what is wrong.
            Ok(None) => file
                .rewind()
                .map_err(|e| ConfigError(format!("{}: cannot read it: {e}", path.display())))?,
            Err(e) => {
                return Err(ConfigError(format!(
                    "{}: cannot read it: {e}",
                    path.display()
                )));
            }
        }
    }
    let text = read_whole(path, file, size)?;
    parse_file(path, &text, kind, home).map(Some)
}

/// A configuration file opened, with its size; `None` when it is absent. `regular`: a
/// directory's listing said that it is a regular file, which looking at it before
/// opening it would only say again.
fn open_optional(path: &Path, regular: bool) -> Result<Option<(std::fs::File, u64)>, ConfigError> {
    use std::os::unix::fs::OpenOptionsExt;

    let error = |problem: String| ConfigError(format!("{}: {problem}", path.display()));
    let cannot_read = |e: io::Error| error(format!("cannot read it: {e}"));
    // Look before opening, so that a FIFO or a device is not even opened.
    if !regular {
        match std::fs::metadata(path) {
            Ok(meta) => readable_kind(&meta).map_err(error)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(cannot_read(e)),
        }
    }
    // Should the path change under gate since, opening still cannot wait (O_NONBLOCK)
    // nor make a terminal gate's own (O_NOCTTY); what was opened is checked again.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot_read(e)),
    };
    let meta = file.metadata().map_err(cannot_read)?;
    readable_kind(&meta).map_err(error)?;
    Ok(Some((file, meta.len())))
}

/// The text of an opened configuration file, at most [`MAX_CONFIG_BYTES`] of it.
fn read_whole(path: &Path, file: std::fs::File, size: u64) -> Result<String, ConfigError> {
    use std::io::Read;

    let error = |problem: String| ConfigError(format!("{}: {problem}", path.display()));
    let cannot_read = |e: io::Error| error(format!("cannot read it: {e}"));
    let too_large = |size: String| {
        error(format!(
            "is larger than 1 MiB ({size}), too large for a configuration file"
        ))
    };
    if size > MAX_CONFIG_BYTES {
        return Err(too_large(format!("{size} bytes")));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large("it grew while it was read".into()));
    }
    String::from_utf8(bytes).map_err(|_| error("the file is not valid UTF-8".into()))
}

/// [`read_optional`], for the other readers of gate's configuration format (a
/// project's file).
pub(crate) fn read_config_file(path: &Path) -> Result<Option<String>, ConfigError> {
    read_optional(path)
}

/// A regular file, or the null device; anything else says what it is.
fn readable_kind(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    let kind = meta.file_type();
    let null_device = kind.is_char_device()
        && nix::sys::stat::major(meta.rdev()) == 1
        && nix::sys::stat::minor(meta.rdev()) == 3;
    if kind.is_file() || null_device {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(format!("is {what}, not a regular file"))
}

/// Load every layer and merge them.
pub fn load(args: &GateArgs, env: &Environment<'_>) -> Result<Settings, ConfigError> {
    load_from(args, env, &SystemPlaces::of(args))
}

/// Whether a name in the drop-in directory is a drop-in: `NAME.toml`, not hidden. So
/// editor backups and package managers' leftovers (`10-ci.toml~`, `10-ci.toml.dpkg-old`,
/// `10-ci.toml.dpkg-dist`, `.10-ci.toml.swp`) and every other file are left alone, as
/// sudo and systemd leave them in their `.d` directories.
pub(crate) fn is_drop_in(name: &OsStr) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let name = name.as_bytes();
    !name.starts_with(b".") && name.len() > ".toml".len() && name.ends_with(b".toml")
}

/// The drop-ins in `dir`, in the byte order of their names (`10-base.toml` before
/// `20-ci.toml` before `ci.toml`). An absent installed directory holds none; a candidate
/// one must be there.
fn drop_in_files(dir: &Path, candidate: bool) -> Result<Vec<DropIn>, ConfigError> {
    drop_ins_in(dir, candidate, !candidate)
}

/// A drop-in found in its directory.
struct DropIn {
    path: PathBuf,
    /// The listing said it is a regular file (not a link, not a FIFO): it need not be
    /// looked at before it is opened (see [`open_optional`]).
    regular: bool,
}

/// The drop-ins in `dir` (see [`drop_in_files`]); `system`: the directory must be one
/// this user cannot write.
fn drop_ins_in(dir: &Path, candidate: bool, system: bool) -> Result<Vec<DropIn>, ConfigError> {
    let cannot = |e: io::Error| {
        ConfigError(format!(
            "{}: cannot read the drop-in directory: {e}",
            dir.display()
        ))
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound && !candidate => return Ok(Vec::new()),
        Err(e) => return Err(cannot(e)),
    };
    if system {
        check_system_place(dir)?;
    }
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(cannot)?;
        let name = entry.file_name();
        if is_drop_in(&name) {
            // From the listing itself where the file system says (no call of its own).
            let regular = entry.file_type().is_ok_and(|kind| kind.is_file());
            names.push((name, regular));
        }
    }
    // On Unix an OsString orders by its bytes.
    names.sort();
    Ok(names
        .into_iter()
        .map(|(name, regular)| DropIn {
            path: dir.join(name),
            regular,
        })
        .collect())
}

/// A file of the installed system layer, or its directory, that this user can write is
/// not a system policy: the commands gate runs as this user could rewrite it, lock and
/// all. Root can write everything, so the check is for every other user.
fn check_system_place(path: &Path) -> Result<(), ConfigError> {
    use nix::unistd::{AccessFlags, access, geteuid};
    if geteuid().is_root() {
        return Ok(());
    }
    // Through a link, the file it leads to and that file's directory count too.
    let real = std::fs::canonicalize(path).ok();
    let real_parent = real.as_deref().and_then(Path::parent);
    for place in [Some(path), path.parent(), real.as_deref(), real_parent]
        .into_iter()
        .flatten()
    {
        if access(place, AccessFlags::W_OK).is_ok() {
            return Err(ConfigError(format!(
                "{}: this user (uid {}) can write {}, so the commands gate runs could rewrite \
                 the system configuration; make it root's and writable by root only \
                 (chown root:root, chmod go-w)",
                path.display(),
                geteuid(),
                if place == path {
                    "it".to_owned()
                } else {
                    format!("its directory {}", place.display())
                }
            )));
        }
    }
    Ok(())
}

/// The system layer: the system file, then each drop-in, every one read, checked and
/// parsed the same way, each a layer of its own (so a lock in one holds against every
/// file after it).
fn system_layers(
    places: &SystemPlaces,
    home: Option<&Path>,
) -> Result<Vec<(PathBuf, Layer)>, ConfigError> {
    let mut layers = Vec::new();
    // A candidate (`--system-file`) may be anywhere.
    let place = || {
        if places.candidate_file {
            Ok(())
        } else {
            check_system_place(&places.file)
        }
    };
    match read_layer_checked(&places.file, FileKind::System, home, false, place)? {
        Some(layer) => layers.push((places.file.clone(), layer)),
        None if places.candidate_file => {
            return Err(ConfigError(format!(
                "--system-file: {}: no such file",
                places.file.display()
            )));
        }
        None => {}
    }
    for DropIn { path, regular } in drop_in_files(&places.drop_ins, places.candidate_drop_ins)? {
        if !places.candidate_drop_ins {
            check_system_place(&path)?;
        }
        // Listed a moment ago: gone now, or a link to nothing, is no policy to skip.
        let read = read_layer_checked(&path, FileKind::System, home, regular, || Ok(()))?;
        let layer = read.ok_or_else(|| {
            ConfigError(format!(
                "{}: cannot read it: it vanished or is a link to nothing",
                path.display()
            ))
        })?;
        layers.push((path, layer));
    }
    Ok(layers)
}

/// The layers of the system and user files, and the files read, in order: what comes
/// before a project's file.
pub(crate) fn file_layers(
    args: &GateArgs,
    env: &Environment<'_>,
    places: &SystemPlaces,
) -> Result<(Vec<Layer>, Vec<PathBuf>), ConfigError> {
    let home = env.home();
    let mut layers = Vec::with_capacity(6);
    let mut files = Vec::new();

    let explicit_user = match (
        &args.config,
        (env.var)("GATE_CONFIG").filter(|v| !v.is_empty()),
    ) {
        (Some(flag), _) => Some((PathBuf::from(flag), "--config")),
        (None, Some(var)) => Some((PathBuf::from(var), "GATE_CONFIG")),
        (None, None) => None,
    };
    if args.no_config && args.config.is_some() {
        return Err(ConfigError(
            "--config and --no-config cannot be used together".into(),
        ));
    }

    // The system layer is read even with --no-config, because a locked one cannot be
    // ignored.
    let system = system_layers(places, home.as_deref())?;
    if args.no_config {
        if let Some((path, _)) = system
            .iter()
            .find(|(_, layer)| matches!(layer.lock, Some((true, _))))
        {
            return Err(ConfigError(format!(
                "--no-config: {} locks the configuration (lock = true), so it cannot be ignored",
                path.display()
            )));
        }
    } else {
        for (path, layer) in system {
            files.push(path);
            layers.push(layer);
        }
    }

    if !args.no_config {
        let (path, required) = match explicit_user {
            Some((path, source)) => {
                if path.as_os_str().is_empty() {
                    return Err(ConfigError(format!("{source}: the path is empty")));
                }
                (Some(path), Some(source))
            }
            None => (env.user_config(), None),
        };
        if let Some(path) = path {
            match read_layer(&path, FileKind::User, home.as_deref())? {
                Some(layer) => {
                    layers.push(layer);
                    files.push(path);
                }
                None => {
                    if let Some(source) = required {
                        return Err(ConfigError(format!(
                            "{source}: {}: no such file",
                            path.display()
                        )));
                    }
                }
            }
        }
        // The user layer's drop-ins (what `gate import` writes), after the user file,
        // each a user file of its own; a named user file (--config, GATE_CONFIG) is the
        // whole user layer.
        if required.is_none() {
            if let Some(dir) = crate::xdg::config_home(env.var).map(|d| user_drop_ins(&d)) {
                for DropIn { path, regular } in drop_ins_in(&dir, false, false)? {
                    let read = read_layer_checked(
                        &path,
                        FileKind::User,
                        home.as_deref(),
                        regular,
                        || Ok(()),
                    )?;
                    let layer = read.ok_or_else(|| {
                        ConfigError(format!(
                            "{}: cannot read it: it vanished or is a link to nothing",
                            path.display()
                        ))
                    })?;
                    layers.push(layer);
                    files.push(path);
                }
            }
        }
    }
    // The always-allow file, part of the user's own layer.
    if let Some(path) = always_file_for(args, env) {
        if let Some(layer) = read_layer(&path, FileKind::Always, home.as_deref())? {
            layers.push(layer);
            files.push(path);
        }
    }
    Ok((layers, files))
}

/// The always-allow file a run with `args` reads: the one beside the default user file.
/// Lasting approvals go with that file only: a host that names another user file
/// (`--config`, `GATE_CONFIG`) or none (`--no-config`) chose the whole user layer.
fn always_file_for(args: &GateArgs, env: &Environment<'_>) -> Option<PathBuf> {
    let named = args.config.is_some() || (env.var)("GATE_CONFIG").is_some_and(|v| !v.is_empty());
    if args.no_config || named {
        return None;
    }
    env.always_file()
}

/// [`load`] with the system layer's places given.
pub(crate) fn load_from(
    args: &GateArgs,
    env: &Environment<'_>,
    places: &SystemPlaces,
) -> Result<Settings, ConfigError> {
    let home = env.home();
    let (mut layers, files) = file_layers(args, env, places)?;
    // The project layer, after the user's own file: a project may tighten the person's
    // settings, and may loosen them only once the person trusts it.
    let mut project = None;
    if !args.no_config {
        let cwd = crate::project::working_dir()?;
        if let Some(loaded) = crate::project::load(&cwd, env.var, home.as_deref())? {
            layers.push(loaded.layer);
            project = Some(loaded.file);
        }
    }

    layers.push(env_layer(env.var)?);
    layers.push(flag_layer(args)?);
    let mut settings = merge(layers, files)?;
    settings.system = places.clone();
    settings.project = project;
    // Under a lock no allow rule can be added, lasting ones included (merge refused a
    // file that has some).
    settings.always_file = always_file_for(args, env).filter(|_| settings.locked_by.is_none());
    Ok(settings)
}
