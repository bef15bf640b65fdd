use super::secrets::{SECRET_LOCATIONS, pattern_may_match};
use super::table::{DATE, FILE, GIT_BRANCH, RG, SED, SORT, TAIL, TREE, UNIQ};
use super::words::is_pattern_char;
use super::*;
use proptest::prelude::*;

/// Commands the preset allows, with the entry that allows them. Every entry has at
/// least one (checked below).
const ALLOWED: &[(&str, &str)] = &[
    ("ls", "ls"),
    ("ls -la", "ls"),
    ("  ls  -l src/ ", "ls"),
    ("\tls -la\t", "ls"),
    ("ls *", "ls"),
    ("ls -d */", "ls"),
    ("ls ~", "ls"),
    ("ls -- -la", "ls"),
    ("ls --color=always", "ls"),
    ("ls # list the files", "ls"),
    ("ls # it's fine", "ls"),
    ("'ls' -l", "ls"),
    ("\"ls\" -l", "ls"),
    ("l''s -l", "ls"),
    ("cat README.md", "cat"),
    ("cat -n a b", "cat"),
    ("head -n 5 src/main.rs", "head"),
    ("head -20 f", "head"),
    ("tail f", "tail"),
    ("tail -n 20 log.txt", "tail"),
    ("tail -20 f", "tail"),
    ("tail -n +5 f", "tail"),
    ("tail -n+5 f", "tail"),
    ("tail -c 100 f", "tail"),
    ("tail -qn 3 a b", "tail"),
    ("tail --lines=5 f", "tail"),
    ("tail --lines 5 f", "tail"),
    ("tail -- -f", "tail"),
    ("wc -l src/*.rs", "wc"),
    ("wc -l *", "wc"),
    ("pwd", "pwd"),
    ("pwd -P", "pwd"),
    ("echo hello world", "echo"),
    ("echo 'a  b' \"c\"", "echo"),
    ("echo *", "echo"),
    ("grep -rn TODO src", "grep"),
    ("grep -r 'fn main' .", "grep"),
    ("grep -e -o -- -x", "grep"),
    ("egrep 'a+b' f", "egrep"),
    ("fgrep -x foo f", "fgrep"),
    ("rg TODO", "rg"),
    ("rg -n 'fn main' src", "rg"),
    ("rg -i foo -g '*.rs'", "rg"),
    ("rg --type rust foo", "rg"),
    ("rg -trust foo", "rg"),
    ("rg -A3 foo", "rg"),
    ("rg -A 3 -B 2 foo", "rg"),
    ("rg --files", "rg"),
    ("rg -uu foo", "rg"),
    ("rg --no-pre foo", "rg"),
    ("rg --no-search-zip foo", "rg"),
    ("rg -e -z foo", "rg"),
    ("rg -e-z foo", "rg"),
    ("rg -- -z", "rg"),
    ("rg --json -C2 foo", "rg"),
    ("find . -name '*.rs'", "find"),
    ("find src -type f -newer Cargo.toml", "find"),
    ("find . -maxdepth 2 -print", "find"),
    ("find . -name x -printf %p", "find"),
    ("find src/* -name x", "find"),
    ("find . -executable -type f", "find"),
    ("find . -name '-x'", "find"),
    ("sed -n '5,10p' f", "sed"),
    ("sed -n '/re/p' f", "sed"),
    ("sed -n 5p f", "sed"),
    ("sed -n -e 5p -e 10p f", "sed"),
    ("sed -ne 5p f", "sed"),
    ("sed -ne5p f", "sed"),
    ("sed -n '1~2p' f", "sed"),
    ("sed -n '0,/x/p' f", "sed"),
    ("sed -n '3,+2p' f", "sed"),
    ("sed -n '3,~4p' f", "sed"),
    ("sed -n '/a/,/b/p' f", "sed"),
    ("sed -n '/x/Ip' f", "sed"),
    ("sed -n '/x/I,/y/Mp' f", "sed"),
    ("sed -n 's/a/b/p' f", "sed"),
    ("sed -n 's/a/b/gp' f", "sed"),
    ("sed -n 's/a/b/2pI' f", "sed"),
    ("sed -n 's,a,b,p' f", "sed"),
    ("sed -n 's#/usr#/opt#p' f", "sed"),
    ("sed -n '/x/!p' f", "sed"),
    ("sed -n '/x/ ! p' f", "sed"),
    ("sed -n = f", "sed"),
    ("sed -n 5q f", "sed"),
    ("sed -n 'q 3' f", "sed"),
    ("sed -n 'l 40' f", "sed"),
    ("sed -n 1Q f", "sed"),
    ("sed -n -E '/a+/p' f", "sed"),
    ("sed --quiet 5p f", "sed"),
    ("sed --silent 5p f", "sed"),
    ("sed -n --expression=5p f", "sed"),
    ("sed -n --expression 5p f", "sed"),
    ("sed 5p -n f", "sed"),
    ("sed -n -s 1p a b", "sed"),
    ("sed -nz 1p f", "sed"),
    ("sed -n --debug --posix --sandbox 1p f", "sed"),
    ("sed -n '  5 p ' f", "sed"),
    ("sed -n -e 1p 5w", "sed"),
    ("git status", "git status"),
    ("git status -s", "git status"),
    ("git status --porcelain=v2 -b", "git status"),
    ("git --no-optional-locks status", "git status"),
    ("git --no-pager log --oneline -5", "git log"),
    ("git -P log", "git log"),
    ("git log --oneline -n 10", "git log"),
    ("git log -p -1", "git log"),
    ("git log -c -1", "git log"),
    ("git log --author=bob --grep fix", "git log"),
    ("git log --format=%H%x09%s", "git log"),
    ("git log -- src/main.rs", "git log"),
    ("git log --oneline", "git log"),
    ("git diff", "git diff"),
    ("git diff --stat HEAD~1", "git diff"),
    ("git diff --cached", "git diff"),
    ("git diff --text", "git diff"),
    ("git diff -C -M", "git diff"),
    ("git diff --no-ext-diff --no-textconv", "git diff"),
    ("git diff --output-indicator-new=+", "git diff"),
    ("git diff -- src/*.rs", "git diff"),
    ("git show HEAD", "git show"),
    ("git grep -n parser src", "git grep"),
    ("git grep -e -x -- '*.rs'", "git grep"),
    ("git grep -eO src", "git grep"),
    ("git grep --no-index -i todo", "git grep"),
    ("git show HEAD~1:README.md", "git show"),
    ("git show HEAD^", "git show"),
    ("git show --stat --no-notes", "git show"),
    ("git rev-parse --show-toplevel", "git rev-parse"),
    ("git rev-parse --git-dir", "git rev-parse"),
    ("git rev-parse --abbrev-ref HEAD", "git rev-parse"),
    ("git ls-files", "git ls-files"),
    ("git ls-files '*.rs'", "git ls-files"),
    ("git ls-files -m --exclude-standard", "git ls-files"),
    ("git blame README.md", "git blame"),
    ("git blame -L 1,5 src/main.rs", "git blame"),
    ("git branch", "git branch"),
    ("git branch -a", "git branch"),
    ("git branch -vv", "git branch"),
    ("git branch -avv", "git branch"),
    ("git branch -r", "git branch"),
    ("git branch --list 'feat*'", "git branch"),
    ("git branch -l feat", "git branch"),
    ("git branch --contains HEAD", "git branch"),
    ("git branch --contains", "git branch"),
    ("git branch --merged main", "git branch"),
    ("git branch --no-merged=main", "git branch"),
    ("git branch --show-current", "git branch"),
    ("git branch --sort=-committerdate", "git branch"),
    ("git branch --sort -committerdate", "git branch"),
    ("git branch --format=%s", "git branch"),
    ("git branch --color=always --column", "git branch"),
    ("which cargo", "which"),
    ("which -a ls", "which"),
    ("type -a ls", "type"),
    ("file README.md", "file"),
    ("file -b --mime-type img/*.png", "file"),
    ("file -L x", "file"),
    ("file -P bytes=100 x", "file"),
    ("file -Pbytes=100 x", "file"),
    ("file -m magic -k x", "file"),
    ("stat -c %s f", "stat"),
    ("stat *", "stat"),
    ("du -sh .", "du"),
    ("du -sh *", "du"),
    ("df -h", "df"),
    ("tree", "tree"),
    ("tree -L 2", "tree"),
    ("tree -a -L 2 src", "tree"),
    ("tree -aL 2", "tree"),
    ("tree -LP 2 '*.rs'", "tree"),
    ("tree -L 2 -I target", "tree"),
    ("tree --charset=ascii", "tree"),
    ("tree --charset ascii -d", "tree"),
    ("tree -J src", "tree"),
    ("tree src/*", "tree"),
    ("sort f", "sort"),
    ("sort -n -k2 f", "sort"),
    ("sort -t, -k2,2n f", "sort"),
    ("sort -k 2 f", "sort"),
    ("sort -rn f", "sort"),
    ("sort -u a b", "sort"),
    ("sort --key=2 --reverse f", "sort"),
    ("sort --check=quiet f", "sort"),
    ("sort -T /tmp f", "sort"),
    ("sort -- -o", "sort"),
    ("sort -to f", "sort"),
    ("sort -k -o f", "sort"),
    ("uniq f", "uniq"),
    ("uniq", "uniq"),
    ("uniq -c f", "uniq"),
    ("uniq -f 1 f", "uniq"),
    ("uniq -cd f", "uniq"),
    ("uniq --skip-fields=2 f", "uniq"),
    ("uniq --all-repeated=separate f", "uniq"),
    ("uniq -2 f", "uniq"),
    ("cut -d: -f1 /etc/passwd", "cut"),
    ("tr a-z A-Z", "tr"),
    ("diff -u a b", "diff"),
    ("diff -r dir1 dir2", "diff"),
    ("cmp a b", "cmp"),
    ("date", "date"),
    ("date +%s", "date"),
    ("date -u +%Y-%m-%dT%H:%M:%SZ", "date"),
    ("date '+%Y-%m-%d %H:%M'", "date"),
    ("date -d yesterday", "date"),
    ("date -d '2 days ago' +%F", "date"),
    ("date -Iseconds", "date"),
    ("date -I", "date"),
    ("date --iso-8601=seconds", "date"),
    ("date -R", "date"),
    ("date -r Cargo.toml", "date"),
    ("uname -a", "uname"),
    ("id -u", "id"),
    ("whoami", "whoami"),
    ("printenv PATH HOME", "printenv"),
    ("printenv -0 HOME", "printenv"),
    ("printenv LC_ALL", "printenv"),
    ("jq . f.json", "jq"),
    ("jq -r '.name' package.json", "jq"),
    ("jq --rawfile x f .", "jq"),
    ("basename /a/b.rs .rs", "basename"),
    ("dirname /a/b", "dirname"),
    ("realpath .", "realpath"),
    ("readlink -f x", "readlink"),
    ("tac f", "tac"),
    ("nl -ba f", "nl"),
    ("md5sum f", "md5sum"),
    ("sha1sum f", "sha1sum"),
    ("sha256sum -c sums", "sha256sum"),
    ("sha512sum *", "sha512sum"),
];

/// Commands the preset refuses, each with a word its reason must contain.
const REFUSED: &[(&str, &str)] = &[
    // A pattern for a program that prints contents: the shell picks the files.
    ("cat *.md", "unquoted pattern"),
    ("head -c 10 *", "unquoted pattern"),
    ("tail -n 5 logs/*.log", "unquoted pattern"),
    ("grep foo *", "unquoted pattern"),
    ("rg --glob=*.rs foo", "unquoted pattern"),
    ("rg --glob=src/*.rs foo", "unquoted pattern"),
    ("rg foo src/*.rs", "unquoted pattern"),
    ("rg foo.*bar src", "unquoted pattern"),
    ("sed -n 5p src/*.rs", "unquoted pattern"),
    ("sort src/*.txt", "unquoted pattern"),
    ("git grep -O x", "-O"),
    ("git grep -Oless x", "-O"),
    ("git grep -iO x", "-O"),
    ("git grep -e x -O", "-O"),
    ("git grep --open-files-in-pager=vi x", "open-files-in-pager"),
    ("git grep --open x", "open-files-in-pager"),
    ("git grep --output=f x", "output"),
    // Not one command, or no command at all.
    ("", "empty"),
    ("   ", "empty"),
    ("\t", "empty"),
    ("# ls", "comment"),
    ("ls; rm -rf ~", "';'"),
    ("ls && rm x", "'&'"),
    ("ls | head", "'|'"),
    ("ls > out", "'>'"),
    ("cat < f", "'<'"),
    ("ls $(rm x)", "'$'"),
    ("ls `rm x`", "'`'"),
    ("ls {a,b}", "'{'"),
    ("ls (x)", "'('"),
    ("ls \\-la", "'\\'"),
    ("ls\n", "newline"),
    ("ls\nrm x", "newline"),
    ("ls\r", "U+000D"),
    ("sed -n '1p;w x' f", "';'"),
    ("egrep 'a|b' f", "'|'"),
    ("echo \"$HOME\"", "'$'"),
    ("ls 'unclosed", "quotes"),
    ("ls \"unclosed", "quotes"),
    // The program.
    ("./ls", "path"),
    ("/bin/ls -la", "path"),
    ("bin/git status", "path"),
    ("./sed -n 5p f", "path"),
    ("/usr/bin/sed -n 5p f", "path"),
    ("~/bin/ls", "path"),
    ("X=1 ls", "assignment"),
    ("GIT_PAGER=evil git log", "assignment"),
    ("LESSOPEN=x cat f", "assignment"),
    ("_x=1 ls", "assignment"),
    ("A_1= ls", "assignment"),
    ("l* -la", "pattern"),
    ("l? x", "pattern"),
    ("[l]s", "pattern"),
    ("LS", "not in"),
    ("ls\u{a0}-l", "not in"),
    ("=x ls", "not in"),
    ("less f", "not in"),
    ("more f", "not in"),
    ("awk 1 f", "not in"),
    ("xargs ls", "not in"),
    ("tee f", "not in"),
    ("rm -rf x", "not in"),
    ("bash -c ls", "not in"),
    ("sh x.sh", "not in"),
    ("python3 -c 1", "not in"),
    ("cd x", "not in"),
    ("command ls", "not in"),
    ("exec ls", "not in"),
    ("time ls", "not in"),
    ("nohup ls", "not in"),
    ("sudo ls", "not in"),
    ("printf x", "not in"),
    ("hostname x", "not in"),
    // tail
    ("tail -f log", "-f"),
    ("tail -F log", "-F"),
    ("tail -5f log", "-f"),
    ("tail -qf log", "-f"),
    ("tail --follow log", "--follow"),
    ("tail --follow=name log", "--follow"),
    ("tail --fol log", "abbreviates `--follow`"),
    ("tail --f log", "abbreviates `--follow`"),
    ("tail --retry f", "--retry"),
    ("tail --pid=1 f", "--pid"),
    ("tail -s 1 f", "-s"),
    ("tail +5f log", "+5f"),
    ("tail +5 log", "+5"),
    ("tail -n 5 *", "pattern"),
    ("tail -n 5 -*", "pattern"),
    ("tail -n 5 ~", "pattern"),
    ("tail -n 5* f", "several words"),
    ("tail -x f", "-x"),
    ("tail --lin=5 f", "spelled out"),
    ("tail -n", "lacks"),
    ("tail --quiet=x f", "no value"),
    ("tail f # -f", "-f"),
    // rg
    ("rg --pre cat foo", "--pre"),
    ("rg --pre=cat foo", "--pre"),
    ("rg --pr=cat foo", "abbreviates `--pre`"),
    ("rg --pre-glob '*.gz' --pre x foo", "--pre-glob"),
    ("rg -z foo", "-z"),
    ("rg -nz foo", "-z"),
    ("rg -zn foo", "-z"),
    ("rg --search-zip foo", "--search-zip"),
    ("rg --search foo", "abbreviates `--search-zip`"),
    ("rg --hostname-bin=x foo", "--hostname-bin"),
    ("rg --hostname-bin x foo", "--hostname-bin"),
    ("rg foo *", "pattern"),
    ("rg -g *.rs foo", "pattern"),
    ("rg -g*.rs foo", "pattern"),
    ("rg --gl*=x foo", "pattern"),
    ("rg -g x*.rs foo", "several words"),
    ("rg foo -z", "-z"),
    ("rg --frobnicate foo", "--frobnicate"),
    ("rg -X foo", "-X"),
    // find
    ("find . -exec rm x", "-exec"),
    ("find . -execdir ls", "-execdir"),
    ("find . -ok ls", "-ok"),
    ("find . -okdir ls", "-okdir"),
    ("find . -delete", "-delete"),
    ("find . -name x -delete", "-delete"),
    ("find . -fprint out", "-fprint"),
    ("find . -fprint0 out", "-fprint0"),
    ("find . -fprintf out %p", "-fprintf"),
    ("find . -fls out", "-fls"),
    ("find . -name -delete", "-delete"),
    ("find . '-delete'", "-delete"),
    ("find * -name x", "pattern"),
    ("find . -name *.rs", "pattern"),
    ("find . -name x -newer ~", "pattern"),
    // sed
    ("sed 5p f", "-n"),
    ("sed -e 5p f", "-n"),
    ("sed -n -i 5p f", "-i"),
    ("sed -ni 5p f", "-i"),
    ("sed -in 5p f", "-i"),
    ("sed -n -i.bak 5p f", "-i"),
    ("sed -n 5p f -i", "-i"),
    ("sed -n --in-place 5p f", "--in-place"),
    ("sed -n --in-place=.bak 5p f", "--in-place"),
    ("sed -n --in-pl 5p f", "abbreviates `--in-place`"),
    ("sed -n --i 5p f", "abbreviates `--in-place`"),
    ("sed -n -f script f", "-f"),
    ("sed -n --file=script f", "--file"),
    ("sed -n e f", "`e`"),
    ("sed -n 1e f", "`e`"),
    ("sed -n 'e rm x' f", "`e`"),
    ("sed -n 'w out' f", "`w`"),
    ("sed -n '1w out' f", "`w`"),
    ("sed -n 'W out' f", "`w`"),
    ("sed -n 'r /etc/passwd' f", "`r`"),
    ("sed -n R f", "`r`"),
    ("sed -n 's/a/b/e' f", "`e`"),
    ("sed -n 's/a/b/w out' f", "`w`"),
    ("sed -n 's/a/b/gw out' f", "`w`"),
    ("sed -n 's,a,b,pw out' f", "`w`"),
    ("sed -n 's/a/b/pe' f", "`e`"),
    ("sed -n 's/[/]/x/w' f", "command"),
    ("sed -n d f", "not one of"),
    ("sed -n 'y/a/b/' f", "not one of"),
    ("sed -n '/a/b' f", "not one of"),
    ("sed -n 'sxaxbxp' f", "delimiter"),
    ("sed -n '' f", "no command"),
    ("sed -n '/a/' f", "no command"),
    ("sed -n '/a p' f", "unterminated"),
    ("sed -n 's/a/b' f", "unterminated"),
    ("sed -n '5p p' f", "more after"),
    ("sed -n '1,p' f", "without an end"),
    ("sed -n '1~p' f", "without a step"),
    ("sed -n", "without a script"),
    ("sed -n * f", "pattern"),
    ("sed -n x* 5p f", "several words"),
    ("sed -n -l x* 5p f", "several words"),
    ("sed -n /^x/p f", "several words"),
    ("sed -n 5p *", "pattern"),
    // git: global options
    ("git -c core.pager=evil log", "-c"),
    ("git -c core.fsmonitor= status", "-c"),
    ("git --config-env=core.pager=E log", "--config-env"),
    ("git -C /tmp/x status", "-C"),
    ("git --git-dir=/tmp/x/.git log", "--git-dir"),
    ("git --work-tree=/ status", "--work-tree"),
    ("git -p log", "pager"),
    ("git --paginate log", "pager"),
    ("git --exec-path=/tmp log", "--exec-path"),
    ("git --exec-path log", "--exec-path"),
    ("git --namespace=x log", "not one of the global"),
    ("git --bare log", "not one of the global"),
    ("git --no-pag log", "not one of the global"),
    ("git --version", "not one of the global"),
    ("git -* log", "pattern"),
    ("git", "without a subcommand"),
    ("git --no-pager", "without a subcommand"),
    // git: subcommands
    ("git push", "not in"),
    ("git commit -m x", "not in"),
    ("git checkout x", "not in"),
    ("git gc", "not in"),
    ("git config core.pager", "not in"),
    ("git stash", "not in"),
    ("git help log", "not in"),
    ("git st*", "not in"),
    ("git s? ", "not in"),
    ("git Log", "not in"),
    // git: options after the subcommand
    ("git log --output=/tmp/x", "--output"),
    ("git log --output /tmp/x", "--output"),
    ("git diff --out=x", "abbreviates `--output`"),
    ("git diff --o=x", "abbreviates `--output`"),
    ("git log --ext-diff", "--ext-diff"),
    ("git diff --ext-d", "abbreviates `--ext-diff`"),
    ("git log -p --textconv", "--textconv"),
    ("git diff --textc", "abbreviates `--textconv`"),
    ("git blame --textconv f", "--textconv"),
    ("git show --show-signature", "--show-signature"),
    ("git log --show-s", "abbreviates `--show-signature`"),
    ("git log --grep --output=x", "--output"),
    ("git log -- --output=x", "--output"),
    ("git log *", "pattern"),
    ("git log -- *", "pattern"),
    ("git diff --out*", "pattern"),
    ("git status # --output=x", "--output"),
    // git branch
    ("git branch new", "create"),
    ("git branch --contains HEAD new", "create"),
    ("git branch -d main", "deletes"),
    ("git branch -D x", "deletes"),
    ("git branch -ad x", "deletes"),
    ("git branch -m a b", "renames"),
    ("git branch --delete x", "deletes"),
    ("git branch --del x", "abbreviates `--delete`"),
    ("git branch -f x", "forces"),
    ("git branch --set-upstream-to=origin/x", "upstream"),
    ("git branch -u origin/main", "upstream"),
    ("git branch --edit-description", "editor"),
    ("git branch --list x*", "several words"),
    ("git branch --no-list", "spelled out"),
    ("git -c x=y branch", "-c"),
    // file
    ("file -z x.gz", "decompression"),
    ("file -bz x", "decompression"),
    ("file -Z x", "decompression"),
    ("file --uncompress x", "decompression"),
    ("file --unc x", "abbreviates `--uncompress`"),
    ("file -C -m m", "compiled"),
    ("file --compile -m m", "compiled"),
    ("file -p x", "access times"),
    ("file --preserve-date x", "access times"),
    ("file -S x", "sandbox"),
    ("file --no-sandbox x", "sandbox"),
    ("file *", "pattern"),
    // tree
    ("tree -o out", "-o"),
    ("tree -Lo 2 out", "-o"),
    ("tree -aLo 2 out", "-o"),
    ("tree -oL out 2", "-o"),
    ("tree -R -L 2", "-R"),
    ("tree -L1", "-1"),
    ("tree *", "pattern"),
    ("tree -L 2 *", "pattern"),
    ("tree -LP 2* x", "several words"),
    ("tree --output x", "--output"),
    // sort
    ("sort -o out f", "-o"),
    ("sort -oout f", "-o"),
    ("sort -no out f", "-o"),
    ("sort -rno out f", "-o"),
    ("sort f -o out", "-o"),
    ("sort --output=out f", "--output"),
    ("sort --output out f", "--output"),
    ("sort --out=x f", "abbreviates `--output`"),
    ("sort --o=x f", "abbreviates `--output`"),
    ("sort --compress-program=gzip f", "--compress-program"),
    ("sort --compress=x f", "abbreviates `--compress-program`"),
    ("sort --co=x f", "abbreviates `--compress-program`"),
    ("sort *", "pattern"),
    ("sort *.txt", "pattern"),
    ("sort ?", "pattern"),
    ("sort [a-]o", "pattern"),
    ("sort ~", "pattern"),
    ("sort ~/x", "pattern"),
    ("sort -k *", "pattern"),
    ("sort -k 2* f", "several words"),
    ("sort -y x", "-y"),
    ("sort --frob f", "--frob"),
    // uniq
    ("uniq a b", "second operand"),
    ("uniq -c in out", "second operand"),
    ("uniq -f 1 a b", "second operand"),
    ("uniq +1 a b", "second operand"),
    ("uniq -- a b", "second operand"),
    ("uniq *", "pattern"),
    ("uniq src/*", "several words"),
    ("uniq f~", "several words"),
    // date
    ("date -s 2020-01-01", "clock"),
    ("date --set=x", "clock"),
    ("date --set x", "clock"),
    ("date --se=x", "abbreviates `--set`"),
    ("date -us x", "clock"),
    ("date 010100002030", "clock"),
    ("date -I seconds", "clock"),
    ("date +%s +%F", "at most one"),
    ("date -d x*", "several words"),
    ("date -r 0* +%s", "several words"),
    // env
    ("env", "not in the read-only preset"),
    ("env ls", "not in the read-only preset"),
    ("printenv", "whole environment"),
    ("printenv OPENAI_API_KEY", "hold no secret"),
    ("cat ~/.ssh/id_rsa", "where secrets are kept"),
];

#[test]
fn allowed_commands_name_their_entry() {
    for (command, entry) in ALLOWED {
        assert_eq!(
            check(command, &Files::nothing_there()).map(|e| e.name),
            Ok(*entry),
            "{command:?} should be read-only by {entry}"
        );
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            Some(*entry),
            "{command:?}"
        );
    }
}

#[test]
fn refused_commands_say_why() {
    for (command, why) in REFUSED {
        match check(command, &Files::nothing_there()) {
            Ok(entry) => panic!("{command:?} was allowed by {}", entry.name),
            Err(e) => assert!(
                e.reason().contains(why),
                "{command:?}: the reason {:?} lacks {why:?}",
                e.reason()
            ),
        }
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            None,
            "{command:?}"
        );
    }
}

#[test]
fn every_entry_has_an_allowed_example() {
    for entry in entries() {
        assert!(
            ALLOWED.iter().any(|(_, e)| *e == entry.name),
            "no allowed example for {}",
            entry.name
        );
    }
}

#[test]
fn the_table_is_well_formed() {
    for (i, entry) in entries().iter().enumerate() {
        assert!(!entry.reason.is_empty() && !entry.refused.is_empty());
        assert!(
            entries()[..i].iter().all(|e| e.name != entry.name),
            "{} twice",
            entry.name
        );
        assert_eq!(
            entry.program() == "git",
            matches!(entry.check, Check::Git(_)),
            "{}",
            entry.name
        );
        assert_eq!(
            entry.globs == Globs::Allowed,
            matches!(entry.check, Check::Any),
            "{}: patterns are free exactly where nothing is refused",
            entry.name
        );
        assert!(
            !entry
                .name
                .contains(|c: char| is_pattern_char(c) || c == '/'),
            "{}",
            entry.name
        );
    }
}

#[test]
fn option_tables_are_consistent() {
    let tables: [(&str, &Options); 9] = [
        ("tail", &TAIL),
        ("sort", &SORT),
        ("uniq", &UNIQ),
        ("date", &DATE),
        ("file", &FILE),
        ("tree", &TREE),
        ("rg", &RG),
        ("sed", &SED),
        ("git branch", &GIT_BRANCH),
    ];
    for (name, spec) in tables {
        let shorts = [spec.flags, spec.values, spec.optional].concat();
        for (c, _) in spec.refused_short {
            assert!(!shorts.contains(*c), "{name}: -{c} is allowed and refused");
        }
        for (i, c) in shorts.char_indices() {
            assert!(!shorts[..i].contains(c), "{name}: -{c} listed twice");
        }
        for (i, (long, _)) in spec.long.iter().enumerate() {
            assert!(
                spec.refused_long.iter().all(|(r, _)| r != long),
                "{name}: --{long} is allowed and refused"
            );
            assert!(
                spec.long[..i].iter().all(|(l, _)| l != long),
                "{name}: --{long} listed twice"
            );
        }
    }
}

#[test]
fn the_documentation_lists_every_entry() {
    let doc = include_str!("../../../docs/readonly.md");
    for entry in entries() {
        assert!(
            doc.contains(&format!("| `{}` |", entry.name)),
            "docs/readonly.md has no row for {}",
            entry.name
        );
    }
}

#[test]
fn words_know_what_the_shell_may_expand() {
    let w = |text: &str| split_words(text).unwrap();
    let flags = |word: &Word| (word.expands, word.option_like);
    let words = w("a* '*'x *b -x* src/*.rs ~ ~/x x~ '-'* ''* HEAD^ a#b --g=* --g* -g=*");
    let got: Vec<_> = words.iter().map(flags).collect();
    assert_eq!(
        got,
        [
            (true, false),  // a*
            (false, false), // '*'x
            (true, true),   // *b
            (true, true),   // -x*
            (true, false),  // src/*.rs
            (true, true),   // ~
            (true, true),   // ~/x
            (true, false),  // x~
            (true, true),   // '-'*
            (true, true),   // ''*
            (true, false),  // HEAD^
            (true, false),  // a#b
            (true, false),  // --g=*
            (true, true),   // --g*
            (true, true),   // -g=*
        ]
    );
    let words = w("ls # a 'b");
    assert_eq!(words.len(), 4);
    assert!(words[1].comment && !words[2].comment);
    assert_eq!(split_words("ls 'a"), None);
    assert_eq!(w("a''b \"\" ''").len(), 3);
}

#[test]
fn reasons_name_the_entry_that_refused() {
    let e = check("sort --out=x f", &Files::nothing_there()).unwrap_err();
    assert_eq!(e.entry(), Some("sort"));
    assert_eq!(
        e.to_string(),
        "`sort`: `--out` abbreviates `--output`, which writes the result to a file"
    );
    assert_eq!(
        check("awk 1 f", &Files::nothing_there())
            .unwrap_err()
            .entry(),
        None
    );
    assert_eq!(
        check("git log --output=x", &Files::nothing_there())
            .unwrap_err()
            .entry(),
        Some("git log")
    );
    assert_eq!(
        check("ls; x", &Files::nothing_there())
            .unwrap_err()
            .to_string(),
        "it contains the shell character ';'"
    );
}

/// Bases that the preset allows, the range of word positions (after the program) where
/// a refused word may be inserted, and words that must then make it refused. No base
/// has `--` or an option whose value is a separate word, so an inserted word is
/// always read as an option or operand.
const BYPASSES: &[(&str, usize, &[&str])] = &[
    (
        "sort -n -k2 a b",
        99,
        &[
            "-o",
            "-ox",
            "-no",
            "--output=x",
            "--out=x",
            "--o",
            "--compress-program=gzip",
            "--comp=x",
            "*",
            "-*",
            "?x",
            "~",
        ],
    ),
    (
        "tail -n5 -q f",
        99,
        &[
            "-f", "-F", "-5f", "--follow", "--fol", "--retry", "-s1", "+5f", "*",
        ],
    ),
    (
        "rg -n -tpy foo src",
        99,
        &[
            "-z",
            "-nz",
            "--search-zip",
            "--sea",
            "--pre=cat",
            "--pre",
            "--pr",
            "--pre-glob=x",
            "--hostname-bin=x",
            "*",
        ],
    ),
    (
        "find . -name x -type f",
        99,
        &[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls", "*",
        ],
    ),
    (
        "sed -n -e5p -e1p f",
        99,
        &[
            "-i",
            "-i.bak",
            "-ni",
            "--in-place",
            "--in",
            "-f",
            "-fx",
            "--file=x",
            "*",
        ],
    ),
    (
        "file -b -L f",
        99,
        &[
            "-z",
            "-Z",
            "-bz",
            "--uncompress",
            "--unc",
            "-C",
            "--compile",
            "-p",
            "-S",
            "*",
        ],
    ),
    ("tree -a -d src", 99, &["-o", "-ao", "-R", "*", "-*"]),
    ("date -u +%s", 99, &["-s", "--set=x", "--se", "0101", "x*"]),
    ("uniq -c f", 99, &["g", "-", "*", "x*"]),
    (
        "printenv HOME",
        99,
        &["ANTHROPIC_API_KEY", "-x", "LC_", "*", "lc_all"],
    ),
    (
        "git log --oneline -n5 -- src",
        99,
        &[
            "--output=x",
            "--out",
            "--ext-diff",
            "--ext",
            "--textconv",
            "--textc",
            "--show-signature",
            "--show-sig",
            "*",
        ],
    ),
    (
        "git --no-pager log --oneline",
        1,
        &[
            "-c",
            "-C",
            "-p",
            "--paginate",
            "--git-dir=x",
            "--exec-path",
            "-*",
        ],
    ),
    (
        "git branch -a -v",
        99,
        &["new", "-d", "-D", "-m", "-M", "-f", "--delete", "-u", "x*"],
    ),
];

fn insert_word(base: &str, at: usize, word: &str) -> String {
    let mut words: Vec<&str> = base.split(' ').collect();
    words.insert(at, word);
    words.join(" ")
}

/// Issue 14, item 4: Claude Code passes its ANTHROPIC_API_KEY to every command, so
/// what prints the environment or a secret file is not read-only.
#[test]
fn the_environment_and_secret_files_are_not_read_only() {
    for command in [
        "env",
        "printenv",
        "printenv -0",
        "printenv ANTHROPIC_API_KEY",
        "printenv HOME ANTHROPIC_API_KEY",
        "printenv -- AWS_SECRET_ACCESS_KEY",
        "cat ~/.ssh/id_rsa",
        "cat /home/me/.ssh/id_rsa",
        "cat .ssh/config",
        "head -c 100 ../../.aws/credentials",
        "grep -r PRIVATE .ssh",
        "grep -r PRIVATE ./.ssh/",
        "ls -la ~/.gnupg",
        "cat ~/.claude/.credentials.json",
        "cat ~/.claude.json",
        "jq . /root/.codex/auth.json",
        "cat ~/.config/gh/hosts.yml",
        "cat ~/.cargo/credentials.toml",
        "diff --from-file=.netrc x",
        "cat ~/.s*/id_rsa",
        "cat ~/.ss?/id_rsa",
        "cat ~/.[s]sh/id_rsa",
        "cat ~/.*/id_rsa",
        "cat ~/.*/*",
        "tail -n1 ~/.config/g*/hosts.yml",
        "git show HEAD:.npmrc",
        "git diff --no-index ~/.ssh/a b",
        "ls # ~/.ssh",
    ] {
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            None,
            "{command}"
        );
    }
    for (command, entry) in [
        ("cat .sshd_config", "cat"),
        ("ls ssh", "ls"),
        ("cat docs/ssh.md", "cat"),
        ("grep -r ssh src", "grep"),
        ("printenv HOME PATH", "printenv"),
        ("ls ~/.config", "ls"),
        ("cat ~/.claude/settings.json", "cat"),
        ("ls src/*.rs", "ls"),
        ("cat .git/config", "cat"),
        ("ls *", "ls"),
        ("ls */id_rsa", "ls"),
    ] {
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            Some(entry),
            "{command}"
        );
    }
    let why = check("cat ~/.ssh/id_rsa", &Files::nothing_there()).unwrap_err();
    assert!(why.reason().contains("`.ssh`"), "{why}");
    let why = check("printenv", &Files::nothing_there()).unwrap_err();
    assert!(why.reason().contains("whole environment"), "{why}");
}

#[test]
fn every_secret_the_sandbox_hides_is_a_secret_location() {
    for hidden in crate::sandbox::spec::DEFAULT_DENY_READ {
        assert!(SECRET_LOCATIONS.contains(&hidden), "{hidden}");
    }
}

#[test]
fn the_sandbox_hides_by_default_exactly_the_preset_s_default_hidden_secrets() {
    assert_eq!(
        crate::sandbox::spec::DEFAULT_DENY_READ,
        DEFAULT_HIDDEN_SECRETS
    );
}

#[test]
fn patterns_match_as_the_shell_would_or_more() {
    for (pattern, name) in [
        (".*", ".ssh"),
        ("*", "ssh"),
        (".s*", ".ssh"),
        ("?ssh", "xssh"),
        (".[abs]sh", ".ssh"),
        ("[", "["),
        (".ssh", ".ssh"),
    ] {
        assert!(pattern_may_match(pattern, name), "{pattern} {name}");
    }
    for (pattern, name) in [
        (".s?", ".ssh"),
        ("x*", ".ssh"),
        ("[ab]", ""),
        ("*", ".ssh"),
        ("?ssh", ".ssh"),
    ] {
        assert!(!pattern_may_match(pattern, name), "{pattern} {name}");
    }
}

#[test]
fn every_bypass_base_is_allowed() {
    for (base, _, _) in BYPASSES {
        assert!(read_only(base, &Files::nothing_there()).is_some(), "{base}");
    }
}

fn shell_or_control_char() -> impl Strategy<Value = char> {
    prop_oneof![
        proptest::sample::select(SHELL_CHARS.to_vec()),
        (0u32..0x20)
            .prop_filter("tab is a blank", |c| *c != 9)
            .prop_map(|c| char::from_u32(c).unwrap()),
        Just('\u{7f}'),
        Just('\u{85}'),
    ]
}

use super::super::SHELL_CHARS;

proptest! {
    /// The shell's word reader, which the preset splits with, reads the preset's
    /// language (no `\`, `$`, `` ` ``, comment) as `shell_words::split` does.
    #[test]
    fn the_words_are_the_ones_shell_words_splits(
        text in "[ab '\"*~é\t]{0,24}",
    ) {
        let ours = split_words(&text).map(|w| w.into_iter().map(|w| w.text).collect::<Vec<_>>());
        prop_assert_eq!(ours, shell_words::split(&text).ok(), "{:?}", text);
    }

    #[test]
    fn an_unmatchable_char_anywhere_is_never_read_only(
        i in 0..ALLOWED.len(),
        at in 0usize..64,
        c in shell_or_control_char(),
    ) {
        let base = ALLOWED[i].0;
        let boundaries: Vec<usize> = base
            .char_indices()
            .map(|(b, _)| b)
            .chain([base.len()])
            .collect();
        let at = boundaries[at % boundaries.len()];
        let command = format!("{}{c}{}", &base[..at], &base[at..]);
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn a_refused_word_inserted_anywhere_is_never_read_only(
        i in 0..BYPASSES.len(),
        at in 0usize..16,
        j in 0usize..16,
    ) {
        let (base, last, words) = BYPASSES[i];
        // A position after the program, up to `last` (the end when `last` is large).
        let count = base.split(' ').count();
        let at = 1 + at % count.min(last);
        let word = words[j % words.len()];
        let command = insert_word(base, at, word);
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn a_path_qualified_program_is_never_read_only(
        i in 0..ALLOWED.len(),
        dir in prop_oneof![
            Just("./".to_owned()),
            Just("/usr/bin/".to_owned()),
            Just("bin/".to_owned()),
            Just("/".to_owned()),
            "[a-z./]{0,6}/",
        ],
    ) {
        let base = ALLOWED[i].0.trim_start_matches([' ', '\t']);
        let command = format!("{dir}{base}");
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn a_leading_assignment_is_never_read_only(
        i in 0..ALLOWED.len(),
        name in "[A-Za-z_][A-Za-z0-9_]{0,8}",
        value in "[a-z0-9/.-]{0,6}",
    ) {
        let command = format!("{name}={value} {}", ALLOWED[i].0);
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn surrounding_blanks_change_nothing(
        i in 0..ALLOWED.len(),
        before in "[ \t]{0,3}",
        after in "[ \t]{0,3}",
    ) {
        let base = ALLOWED[i].0;
        prop_assert_eq!(read_only(&format!("{before}{base}{after}"), &Files::nothing_there()), read_only(base, &Files::nothing_there()));
    }

    #[test]
    fn an_unquoted_leading_pattern_is_refused_and_a_quoted_one_is_not(
        i in 0..6usize,
        pattern in "[*?][a-z-]{0,4}",
    ) {
        // Bases where an extra operand is harmless, so only the quoting differs.
        let base = [
            "sort -n f",
            "tail -n 5 f",
            "rg -n foo src",
            "find . -type f",
            "file -b f",
            "git log --oneline",
        ][i];
        let unquoted = format!("{base} {pattern}");
        let quoted = format!("{base} '{pattern}'");
        prop_assert_eq!(read_only(&unquoted, &Files::nothing_there()), None, "{:?}", unquoted);
        prop_assert!(read_only(&quoted, &Files::nothing_there()).is_some(), "{:?}", quoted);
    }

    #[test]
    fn anything_read_only_is_a_bare_listed_program_without_shell_syntax(
        text in "[ -~\t\u{a0}é]{0,40}",
    ) {
        if let Some(name) = read_only(&text, &Files::nothing_there()) {
            prop_assert!(first_unmatchable_char(&text).is_none());
            let entry = entries().iter().find(|e| e.name == name).unwrap();
            let first = shell_words::split(&text).unwrap().remove(0);
            prop_assert_eq!(first, entry.program());
        }
    }

    #[test]
    fn words_from_preset_programs_never_panic(
        program in proptest::sample::select(
            entries().iter().map(|e| e.name).collect::<Vec<_>>()
        ),
        args in proptest::collection::vec(
            prop_oneof![
                "-{1,2}[a-zA-Z0-9=.-]{0,8}",
                "[a-z0-9*?~+/^#.,]{1,6}",
                Just("--".to_owned()),
                Just("'-o'".to_owned()),
            ],
            0..6,
        ),
    ) {
        let command = format!("{program} {}", args.join(" "));
        if let Some(name) = read_only(&command, &Files::nothing_there()) {
            prop_assert_eq!(name, program);
        }
    }
}
