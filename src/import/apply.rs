//! `gate import AGENT [FILE...]`: the edges of an import. Find the agent's files where
//! the agent reads them, read them, hand their text to the agent's pure reader, plan
//! (see [`super::plan`]), print the table, and with `--save` replace gate's own import
//! file for that agent atomically, then load the whole configuration as a run would and
//! put the old file back if it does not load.
//!
//! gate never edits a file the person wrote: the user layer's rules go to
//! `$XDG_CONFIG_HOME/gate/config.d/import-AGENT.toml`, an administrator's (managed) rules
//! to the system layer's `/etc/gate/config.d/import-AGENT.toml` when gate runs as root,
//! and into the user file otherwise (the table says which).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::plan::{self, Choices, Plan, Planned};
use super::{ImportError, Scope};
use crate::config::FileKind;
use crate::output::{fail, print_out, say};

/// The agents gate imports from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    pub const NAMES: [&str; 3] = ["claude", "codex", "gemini"];

    pub fn parse(name: &str) -> Option<Agent> {
        match name {
            "claude" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            "gemini" => Some(Agent::Gemini),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }
}

/// What the person asked of `gate import`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportArgs {
    pub agent: String,
    /// Files to read instead of the agent's own places (each read as the person's own).
    pub files: Vec<PathBuf>,
    /// Import a project's allow rules too.
    pub project: bool,
    /// Write gate's import files.
    pub write: bool,
    /// Print the files' TOML on stdout (the table goes to stderr).
    pub print: bool,
    /// Gemini CLI: accept gate's whole-word reading of deny and ask prefixes.
    pub whole_words: bool,
}

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The files an agent reads, in its own order, with whose they are. Absent ones are left
/// out by [`read_all`].
pub fn places(
    agent: Agent,
    var: crate::xdg::Var<'_>,
    cwd: &Path,
) -> Result<Vec<(PathBuf, Scope)>, String> {
    let home = crate::xdg::home(var);
    let need_home = || {
        home.clone()
            .ok_or_else(|| "HOME is not set to an absolute path, so the agent's own files cannot be found; name them instead".to_owned())
    };
    let mut out = Vec::new();
    match agent {
        Agent::Claude => {
            let managed = Path::new("/etc/claude-code");
            out.push((managed.join("managed-settings.json"), Scope::Managed));
            for path in listing(&managed.join("managed-settings.d"), "json")? {
                out.push((path, Scope::Managed));
            }
            let user_dir = match var("CLAUDE_CONFIG_DIR").map(PathBuf::from) {
                Some(dir) if dir.is_absolute() => dir,
                _ => need_home()?.join(".claude"),
            };
            out.push((user_dir.join("settings.json"), Scope::User));
            out.push((cwd.join(".claude/settings.json"), Scope::Project));
            out.push((cwd.join(".claude/settings.local.json"), Scope::Local));
        }
        Agent::Codex => {
            // Codex's home is CODEX_HOME when that is set; its layers are read system
            // first, then the person's, then the project's.
            let codex_home = match var("CODEX_HOME").map(PathBuf::from) {
                Some(dir) if dir.is_absolute() => dir,
                _ => need_home()?.join(".codex"),
            };
            for (dir, scope) in super::codex::rule_folders(&codex_home, cwd) {
                for path in listing(&dir, "rules")? {
                    out.push((path, scope));
                }
            }
            out.push((PathBuf::from(super::codex::REQUIREMENTS), Scope::Managed));
        }
        Agent::Gemini => {
            for path in listing(Path::new("/etc/gemini-cli/policies"), "toml")? {
                out.push((path, Scope::Managed));
            }
            // Gemini CLI's home is GEMINI_CLI_HOME when that is set.
            let home = match var("GEMINI_CLI_HOME").map(PathBuf::from) {
                Some(dir) if dir.is_absolute() => dir,
                _ => need_home()?,
            };
            for path in listing(&home.join(".gemini/policies"), "toml")? {
                out.push((path, Scope::User));
            }
        }
    }
    Ok(out)
}

/// The files in `dir` whose names end in `.EXT`, sorted; none when it is absent.
fn listing(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: cannot list it: {e}", dir.display())),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: cannot list it: {e}", dir.display()))?;
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// The most an agent's file may hold: 1 MiB, as for gate's own files.
const MAX_BYTES: u64 = 1024 * 1024;

/// Read each file that is there; a named one must be.
fn read_all(
    places: Vec<(PathBuf, Scope)>,
    named: bool,
) -> Result<Vec<(PathBuf, Scope, String)>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = Vec::new();
    for (path, scope) in places {
        // Look before opening, so that a FIFO a repository put in place of a settings
        // file cannot make the import wait; opening cannot wait either.
        match std::fs::metadata(&path) {
            Ok(meta) if !meta.is_file() => {
                return Err(format!("{}: not a regular file", path.display()));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => continue,
            Err(e) => return Err(format!("{}: cannot read it: {e}", path.display())),
        }
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) => return Err(format!("{}: cannot read it: {e}", path.display())),
        };
        let meta = file
            .metadata()
            .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("{}: not a regular file", path.display()));
        }
        let mut bytes = Vec::new();
        file.take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err(format!("{}: larger than 1 MiB", path.display()));
        }
        let text =
            String::from_utf8(bytes).map_err(|_| format!("{}: not valid UTF-8", path.display()))?;
        out.push((path, scope, text));
    }
    Ok(out)
}

/// The name of gate's file for an agent's rules, in either drop-in directory.
pub fn file_name(agent: Agent) -> String {
    format!("import-{}.toml", agent.name())
}

/// Replace `path` with `text`: a hidden temporary file in the same directory (which no
/// loader reads), synced, then renamed over it. Returns what was there before.
fn replace(path: &Path, text: &str) -> Result<Option<Vec<u8>>, String> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
        .map_err(|e| format!("{}: cannot create it: {e}", dir.display()))?;
    let before = match std::fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("{}: cannot read it: {e}", path.display())),
    };
    crate::replace::replace(path, text.as_bytes(), 0o644)
        .map_err(|e| format!("{}: cannot write it: {e}", path.display()))?;
    Ok(before)
}

fn put_back(path: &Path, before: Option<Vec<u8>>) {
    let _ = match before {
        Some(bytes) => std::fs::write(path, bytes),
        None => std::fs::remove_file(path),
    };
}

/// Run `gate import`.
pub fn run(inv: &crate::invocation::Invocation, args: &ImportArgs) -> i32 {
    let Some(agent) = Agent::parse(&args.agent) else {
        return fail(format!(
            "import: gate imports from {}, not {}",
            Agent::NAMES.join(", "),
            shell_words::quote(&args.agent)
        ));
    };
    let cwd = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(e) => return fail(format!("import: cannot find the working directory: {e}")),
    };
    let named = !args.files.is_empty();
    let found = if named {
        Ok(args
            .files
            .iter()
            .map(|f| (cwd.join(f), Scope::User))
            .collect())
    } else {
        places(agent, &var, &cwd)
    };
    let files = match found.and_then(|places| read_all(places, named)) {
        Ok(files) => files,
        Err(e) => return fail(format!("import: {e}; nothing was written")),
    };
    if files.is_empty() {
        return fail(format!(
            "import: none of {}'s files is here ({}); name one: gate import {} FILE",
            agent.name(),
            places(agent, &var, &cwd)
                .map(|p| p
                    .iter()
                    .map(|(p, _)| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default(),
            agent.name()
        ));
    }
    let entries = match agent {
        Agent::Claude => super::claude::read(&files),
        Agent::Codex => super::codex::read(&files),
        Agent::Gemini => super::gemini::read_with(
            &files,
            super::gemini::Options {
                whole_words: args.whole_words,
            },
        ),
    };
    let plan = match entries.and_then(|e| {
        plan::plan(
            e,
            Choices {
                project: args.project,
            },
        )
    }) {
        Ok(plan) => plan,
        Err(e) => return import_error(&e),
    };
    let sources: Vec<&Path> = files.iter().map(|(p, _, _)| p.as_path()).collect();
    finish(inv, agent, args, plan, &sources)
}

fn import_error(e: &ImportError) -> i32 {
    fail(format!("import: {e}; nothing was written"))
}

/// Where each layer's file goes, and the system rules moved to the user file when this
/// user cannot write the system layer.
struct Targets {
    user: Option<PathBuf>,
    system: PathBuf,
    root: bool,
}

fn targets(agent: Agent, inv: &crate::invocation::Invocation) -> Targets {
    let user = crate::xdg::config_home(&var)
        .map(|dir| crate::config::user_drop_ins(&dir).join(file_name(agent)));
    let system = inv
        .gate
        .system_drop_ins
        .as_ref()
        .map_or_else(crate::config::system_drop_ins, PathBuf::from)
        .join(file_name(agent));
    Targets {
        user,
        system,
        root: nix::unistd::geteuid().is_root(),
    }
}

fn finish(
    inv: &crate::invocation::Invocation,
    agent: Agent,
    args: &ImportArgs,
    mut plan: Plan,
    sources: &[&Path],
) -> i32 {
    let targets = targets(agent, inv);
    let mut notes = Vec::new();
    // Only root writes the system layer. Run as anyone else, an administrator's deny and
    // ask rules still hold, from the user layer (they only tighten, which even a lock
    // allows); their allow rules are left to root (`--print` shows the file they would
    // be in), since an allow is the administrator's to grant in the administrator's layer.
    let mut left_to_root = Vec::new();
    if !targets.root && !plan.system.is_empty() {
        let moved;
        (moved, left_to_root) = plan.without_the_system_layer();
        if moved > 0 {
            notes.push(format!(
                "{moved} deny or ask rule(s) of the administrator's go to the user layer: only \
                 root writes the system layer ({})",
                targets.system.display()
            ));
        }
        if !left_to_root.is_empty() {
            notes.push(format!(
                "{} allow rule(s) of the administrator's are not written: they belong in the \
                 system layer ({}), which only root writes (--print shows them)",
                left_to_root.len(),
                targets.system.display()
            ));
        }
    }
    let Some(user_path) = targets.user.clone() else {
        return fail(
            "import: neither XDG_CONFIG_HOME nor HOME is set to an absolute path, so gate has no user configuration directory; nothing was written",
        );
    };
    let mut files: Vec<(PathBuf, &Vec<Planned>, FileKind)> =
        vec![(user_path.clone(), &plan.user, FileKind::User)];
    // The system layer is touched only when there is something for it, or an earlier
    // import's file to replace.
    if targets.root && (!plan.system.is_empty() || targets.system.exists()) {
        files.push((targets.system.clone(), &plan.system, FileKind::System));
    }
    let table = plan::table(&plan);
    if args.print {
        say(table.trim_end());
        let mut out = String::new();
        for (path, rules, _) in &files {
            out.push_str(&format!("# {}\n", path.display()));
            out.push_str(&plan::toml(agent.name(), rules, sources));
        }
        if !left_to_root.is_empty() {
            out.push_str(&format!(
                "# {} (not written: only root writes the system layer)\n",
                targets.system.display()
            ));
            out.push_str(&plan::toml(agent.name(), &left_to_root, sources));
        }
        let code = print_out(&out);
        if code != 0 || !args.write {
            return code;
        }
    } else if print_out(&table) != 0 {
        return crate::output::GATE_ERROR;
    }
    for note in &notes {
        say(&format!("gate: import: {note}"));
    }
    if inv.gate.config.is_some() || var("GATE_CONFIG").is_some_and(|v| !v.is_empty()) {
        say(&format!(
            "gate: import: --config or GATE_CONFIG names the user file, so gate does not read \
             {} while it is set",
            user_path.parent().unwrap_or(&user_path).display()
        ));
    }
    if !args.write {
        say(&format!(
            "gate: import: nothing was written (a dry run); --save writes {}",
            files
                .iter()
                .map(|(p, _, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        ));
        return 0;
    }
    write_files(inv, agent, &files, sources)
}

fn write_files(
    inv: &crate::invocation::Invocation,
    agent: Agent,
    files: &[(PathBuf, &Vec<Planned>, FileKind)],
    sources: &[&Path],
) -> i32 {
    let home = crate::xdg::home(&var);
    // Each file parses as the layer it goes to before anything is replaced.
    let mut texts = Vec::new();
    for (path, rules, kind) in files {
        let text = plan::toml(agent.name(), rules, sources);
        if let Err(e) = crate::config::parse_file(path, &text, *kind, home.as_deref()) {
            return fail(format!(
                "import: the file gate made does not load ({e}); nothing was written (a bug \
                 in gate: please report it)"
            ));
        }
        texts.push(text);
    }
    let mut replaced = Vec::new();
    for ((path, _, _), text) in files.iter().zip(&texts) {
        match replace(path, text) {
            Ok(before) => replaced.push((path.clone(), before)),
            Err(e) => {
                for (path, before) in replaced.into_iter().rev() {
                    put_back(&path, before);
                }
                return fail(format!("import: {e}; nothing was written"));
            }
        }
    }
    // The whole configuration, as the next command will load it.
    let env = crate::config::Environment { var: &var };
    if let Err(e) = crate::config::load(&inv.gate, &env) {
        for (path, before) in replaced.into_iter().rev() {
            put_back(&path, before);
        }
        return fail(format!(
            "import: with the imported rules the configuration does not load: {e}; the \
             previous files were put back"
        ));
    }
    for (path, rules, _) in files {
        say(&format!(
            "gate: import: wrote {} ({} rule(s))",
            path.display(),
            rules.len()
        ));
    }
    0
}
