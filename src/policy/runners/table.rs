//! The test and build runners, as data: how each reads its words, and the options (and,
//! for make, the assignments) that make it load or run code other than the project's.
//! [`super`] reads a command with its entry; an allow rule for the runner then does not
//! match a command that holds one of them after the rule's own words.
//!
//! Names hold their dashes as written (`-f`, `--file`, go's `-exec`). A list need not
//! hold every option of its runner, only the ones that bring in other code; it is the
//! runner's documentation (make 4.3, cargo 1.8x, pytest 8, go 1.2x, tox 4, npm 11,
//! pnpm 9, yarn 1 and 4) read for options that name a program, a module, a plugin, a
//! configuration file or another project.

/// How a runner reads the words after its name.
#[derive(Debug)]
pub struct Syntax {
    /// Short options cluster (`-sf FILE` is `-s -f FILE`), and the rest of a cluster
    /// after an option that takes a value is that value (`-fFILE`).
    pub clusters: bool,
    /// One dash starts a long option as well as two (Go's flag package: `-exec`,
    /// `--exec`).
    pub single_dash_long: bool,
    /// Names are compared without case, `-` and `_` inside them, and what follows a `.`
    /// (npm's and the node tools' options: `--setupFiles` is `--setup-files`, pnpm's
    /// `--config.script-shell` sets `script-shell`).
    pub loose_names: bool,
    /// The short options that take a value: in a cluster, the rest of the word is it.
    pub short_values: &'static str,
}

/// When a refused option is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// Unless its value starts with this (`pytest -p no:cacheprovider` turns a plugin off).
    UnlessValueStarts(&'static str),
    /// When its value is a file rather than a name (`cargo --target ./x.json`): it
    /// contains `/` or ends with `.json`.
    ValueIsAFile,
}

/// One refused option, in all its spellings.
#[derive(Debug)]
pub struct Refused {
    pub names: &'static [&'static str],
    pub when: When,
    /// What it does, completing "the option … ".
    pub why: &'static str,
}

const fn refused(names: &'static [&'static str], why: &'static str) -> Refused {
    Refused {
        names,
        when: When::Always,
        why,
    }
}

/// The refused options of one program, and how it spells them.
#[derive(Debug)]
pub struct List {
    pub refused: &'static [Refused],
    /// The program takes a long option written as a prefix of its name (getopt,
    /// argparse and nopt read `--fil` as `--file`): a prefix of a refused name is refused.
    pub prefixes: bool,
    /// Options of their own that begin a refused name (`pytest --pdb` is not
    /// `--pdbcls`).
    pub exact: &'static [&'static str],
}

/// A runner: the words that name it, and what it refuses.
#[derive(Debug)]
pub struct Runner {
    /// The command's first words (`make`, `python3 -m pytest`).
    pub command: &'static [&'static str],
    pub syntax: Syntax,
    /// The options refused before `--`.
    pub refused: &'static [&'static List],
    /// The options refused after `--`: the runner hands those words to the program the
    /// project's configuration runs (`npm test -- --require x` reaches `node`).
    pub after_dashes: &'static [&'static List],
    /// Why a `NAME=VALUE` word that is not an option is refused, anywhere (make's
    /// variables); `None` when such a word is an ordinary operand.
    pub assignments: Option<&'static str>,
    /// Why a word that starts with `@` is refused: the runner reads more arguments from
    /// the file it names.
    pub argument_files: Option<&'static str>,
    /// After this word, the words go to the tests, not to the runner (`go test -args`).
    pub stop: Option<&'static str>,
}

const GNU: Syntax = Syntax {
    clusters: true,
    single_dash_long: false,
    loose_names: false,
    short_values: "",
};

// ---------------------------------------------------------------------------------------
// make

const MAKE_REFUSED: &[Refused] = &[
    refused(
        &["-f", "--file", "--makefile"],
        "reads another makefile, whose recipes then run",
    ),
    refused(
        &["-C", "--directory"],
        "runs the makefile of another directory",
    ),
    refused(
        &["-I", "--include-dir"],
        "looks for the makefiles the project includes in another directory",
    ),
    refused(
        &["-E", "--eval"],
        "reads its value as makefile text, which can define recipes and run commands",
    ),
];

const MAKE: List = List {
    refused: MAKE_REFUSED,
    prefixes: true,
    exact: &[],
};

const MAKE_ASSIGNMENT: &str = "assigns a variable, which overrides the makefile's own; \
    recipes run variables as commands (`SHELL`, `.SHELLFLAGS`, `CC`, `MAKE`) and make reads \
    options from them (`MAKEFLAGS`, `MAKEFILES`)";

// ---------------------------------------------------------------------------------------
// cargo

const CARGO_REFUSED: &[Refused] = &[
    refused(
        &["--config"],
        "sets configuration, which names programs cargo runs (`build.rustc-wrapper`, \
         `target.<triple>.runner`, `target.<triple>.linker`), or reads it from another file",
    ),
    refused(
        &["-Z"],
        "turns on unstable behaviour, which includes other ways to read configuration",
    ),
    refused(
        &["--manifest-path"],
        "builds another package, whose build scripts and tests then run",
    ),
    refused(&["-C"], "runs cargo in another directory, on its package"),
    Refused {
        names: &["--target"],
        when: When::ValueIsAFile,
        why: "names a target specification file, which names the linker cargo runs",
    },
];

const CARGO: List = List {
    refused: CARGO_REFUSED,
    prefixes: false,
    exact: &[],
};

// ---------------------------------------------------------------------------------------
// pytest

const PYTEST_REFUSED: &[Refused] = &[
    Refused {
        names: &["-p"],
        when: When::UnlessValueStarts("no:"),
        why: "loads a plugin module (`-p no:NAME`, which turns one off, is fine)",
    },
    refused(
        &["-c", "--config-file", "--inifile", "--rootdir"],
        "takes the configuration from another file or directory, whose `addopts`, \
         `pythonpath` and plugins then apply",
    ),
    refused(
        &["-o", "--override-ini"],
        "overrides configuration such as `pythonpath`, `addopts` and `required_plugins`",
    ),
    refused(
        &["--confcutdir"],
        "loads `conftest.py` files from directories above the project",
    ),
    refused(
        &["--pyargs"],
        "imports its arguments as Python packages to find them",
    ),
    refused(&["--pdbcls"], "imports the debugger class from a module"),
    refused(
        &["-W", "--pythonwarnings"],
        "imports the module that a warning filter's category names",
    ),
    refused(
        &["--cov-config"],
        "reads coverage's configuration from another file, which can load plugin modules",
    ),
    refused(
        &["--basetemp"],
        "removes the directory it names before the run",
    ),
];

const PYTEST: List = List {
    refused: PYTEST_REFUSED,
    prefixes: true,
    exact: &["--co", "--pdb", "--cov"],
};

const PYTEST_SYNTAX: Syntax = Syntax {
    short_values: "kmcporWn",
    ..GNU
};

const ARGUMENT_FILE: &str = "reads more arguments from the file it names, which gate cannot see";

// ---------------------------------------------------------------------------------------
// go

const GO_REFUSED: &[Refused] = &[
    refused(
        &["-exec"],
        "runs the test binary (or `go run`'s program) through the program it names",
    ),
    refused(
        &["-toolexec"],
        "runs every compiler and linker step through the program it names",
    ),
    refused(&["-vettool"], "runs the program it names as the vet tool"),
    refused(
        &["-overlay"],
        "replaces source files with the files its JSON file names",
    ),
    refused(
        &["-modfile"],
        "reads another go.mod, which can replace modules with other code",
    ),
    refused(
        &["-pkgdir"],
        "loads compiled packages from another directory",
    ),
    refused(&["-C"], "runs in another directory, on its module"),
    refused(
        &["-ldflags", "-gccgoflags"],
        "passes flags to the linker, which can name another program to link with \
         (`-extld`)",
    ),
    refused(
        &["-gcflags", "-asmflags"],
        "passes flags to the compiler or assembler, which can name files to load \
         (`-importcfg`)",
    ),
];

const GO: List = List {
    refused: GO_REFUSED,
    prefixes: false,
    exact: &[],
};

// ---------------------------------------------------------------------------------------
// tox

const TOX_REFUSED: &[Refused] = &[
    refused(
        &["-c", "--conf", "--configfile"],
        "takes the configuration, and so the commands tox runs, from another file",
    ),
    refused(
        &["-x", "--override"],
        "overrides configuration such as `commands`, the commands tox runs",
    ),
    refused(
        &["--root", "--workdir"],
        "uses another project's directory, or another place for the environments and \
         the interpreters and packages found there",
    ),
    refused(
        &["--installpkg"],
        "installs another package, whose build code runs",
    ),
    refused(
        &["--force-dep"],
        "installs other dependencies, whose build code runs",
    ),
    refused(
        &["--discover"],
        "runs the Python interpreters it names to look at them",
    ),
    refused(
        &["-i", "--index-url"],
        "installs packages from another index",
    ),
];

const TOX: List = List {
    refused: TOX_REFUSED,
    prefixes: true,
    exact: &[],
};

// ---------------------------------------------------------------------------------------
// npm, pnpm, yarn

// What npm, pnpm and yarn share: each runs a package's scripts with a shell and node, as
// its configuration or an option says.
const SCRIPT_SHELL: Refused = refused(
    &["--script-shell"],
    "runs the package's scripts with the program it names as the shell",
);
const NODE_OPTIONS: Refused = refused(
    &["--node-options"],
    "passes options to node, such as `--require MODULE`",
);
/// npm and pnpm read `.npmrc`.
const OTHER_NPMRC: Refused = refused(
    &["--userconfig", "--globalconfig"],
    "reads another `.npmrc`, which can set `script-shell` and `node-options`",
);
const ANOTHER_PACKAGE: &str = "runs the scripts of another directory's package.json";

const NPM_REFUSED: &[Refused] = &[
    SCRIPT_SHELL,
    NODE_OPTIONS,
    OTHER_NPMRC,
    refused(&["--prefix", "-C"], ANOTHER_PACKAGE),
    refused(&["--call", "-c"], "runs the command it gives (`npm exec`)"),
    refused(
        &[
            "--shell",
            "--git",
            "--node-gyp",
            "--editor",
            "--browser",
            "--viewer",
        ],
        "names a program npm runs",
    ),
    refused(
        &["--onload-script", "--init-module"],
        "names a module npm loads",
    ),
];

const NPM: List = List {
    refused: NPM_REFUSED,
    prefixes: true,
    exact: &[],
};

const PNPM_REFUSED: &[Refused] = &[
    SCRIPT_SHELL,
    NODE_OPTIONS,
    refused(
        &["--config"],
        "sets configuration (`--config.script-shell`), which names programs pnpm runs",
    ),
    OTHER_NPMRC,
    refused(&["--dir", "-C"], ANOTHER_PACKAGE),
    refused(
        &["--pnpmfile", "--global-pnpmfile"],
        "loads hooks from another `.pnpmfile.cjs`",
    ),
    refused(
        &["--use-node-version"],
        "downloads and runs another version of node",
    ),
];

const PNPM: List = List {
    refused: PNPM_REFUSED,
    prefixes: true,
    exact: &[],
};

const YARN_REFUSED: &[Refused] = &[
    refused(&["--cwd"], ANOTHER_PACKAGE),
    refused(
        &["--use-yarnrc", "--yarn-path"],
        "reads another `.yarnrc`, or runs another copy of yarn",
    ),
    refused(
        &["--modules-folder"],
        "takes the packages (and their programs) from another directory",
    ),
    SCRIPT_SHELL,
    NODE_OPTIONS,
];

const YARN: List = List {
    refused: YARN_REFUSED,
    prefixes: true,
    exact: &[],
};

/// Options of the programs a package's `test` script most often runs (node, jest, mocha,
/// vitest, ava, tap). npm, pnpm and yarn hand the words after the script's name on to
/// that program, so these are refused wherever they are.
const NODE_TOOLS_REFUSED: &[Refused] = &[
    refused(
        &[
            "--require",
            "-r",
            "--import",
            "--loader",
            "--experimental-loader",
        ],
        "loads a module before the tests (node, mocha, ava, tap)",
    ),
    refused(
        &[
            "--config",
            "-c",
            "--preset",
            "--projects",
            "--root-dir",
            "--root",
            "--dir",
        ],
        "takes the test tool's configuration, a module, from another file or directory \
         (jest, mocha, vitest)",
    ),
    refused(
        &[
            "--setup-files",
            "--setup-files-after-env",
            "--global-setup",
            "--global-teardown",
            "--test-runner",
            "--test-environment",
            "--test-sequencer",
            "--transform",
            "--resolver",
            "--runner",
            "--reporters",
            "--reporter",
            "--snapshot-resolver",
            "--watch-plugins",
            "--environment",
            "--ui",
            "--file",
        ],
        "names a module the test tool loads (jest, mocha, vitest)",
    ),
    refused(
        &["--node-option", "-n", "--node-arg"],
        "passes options to node, such as `--require MODULE` (mocha, ava)",
    ),
];

const NODE_TOOLS: List = List {
    refused: NODE_TOOLS_REFUSED,
    prefixes: false,
    exact: &[],
};

const NPM_SYNTAX: Syntax = Syntax {
    clusters: true,
    single_dash_long: false,
    loose_names: true,
    short_values: "Ccwr",
};

// ---------------------------------------------------------------------------------------
// The table

const PYTEST_RUNNER: Runner = Runner {
    command: &["pytest"],
    syntax: PYTEST_SYNTAX,
    refused: &[&PYTEST],
    after_dashes: &[],
    assignments: None,
    argument_files: Some(ARGUMENT_FILE),
    stop: None,
};

pub const RUNNERS: &[Runner] = &[
    Runner {
        command: &["make"],
        syntax: Syntax {
            short_values: "CfIjlOoWE",
            ..GNU
        },
        refused: &[&MAKE],
        after_dashes: &[],
        assignments: Some(MAKE_ASSIGNMENT),
        argument_files: None,
        stop: None,
    },
    Runner {
        command: &["cargo"],
        syntax: Syntax {
            short_values: "pjFZCt",
            ..GNU
        },
        refused: &[&CARGO],
        after_dashes: &[],
        assignments: None,
        argument_files: None,
        stop: None,
    },
    PYTEST_RUNNER,
    Runner {
        command: &["py.test"],
        ..PYTEST_RUNNER
    },
    Runner {
        command: &["python", "-m", "pytest"],
        ..PYTEST_RUNNER
    },
    Runner {
        command: &["python3", "-m", "pytest"],
        ..PYTEST_RUNNER
    },
    Runner {
        command: &["go"],
        syntax: Syntax {
            clusters: false,
            single_dash_long: true,
            loose_names: false,
            short_values: "",
        },
        refused: &[&GO],
        after_dashes: &[],
        assignments: None,
        argument_files: None,
        stop: Some("-args"),
    },
    Runner {
        command: &["tox"],
        syntax: Syntax {
            short_values: "cexipmfn",
            ..GNU
        },
        refused: &[&TOX],
        // tox hands them to its commands as `{posargs}`, most often to pytest.
        after_dashes: &[&PYTEST],
        assignments: None,
        argument_files: None,
        stop: None,
    },
    Runner {
        command: &["npm"],
        syntax: NPM_SYNTAX,
        refused: &[&NPM, &NODE_TOOLS],
        after_dashes: &[&NODE_TOOLS],
        assignments: None,
        argument_files: None,
        stop: None,
    },
    Runner {
        command: &["pnpm"],
        syntax: NPM_SYNTAX,
        refused: &[&PNPM, &NODE_TOOLS],
        after_dashes: &[&NODE_TOOLS],
        assignments: None,
        argument_files: None,
        stop: None,
    },
    Runner {
        command: &["yarn"],
        syntax: NPM_SYNTAX,
        refused: &[&YARN, &NODE_TOOLS],
        after_dashes: &[&NODE_TOOLS],
        assignments: None,
        argument_files: None,
        stop: None,
    },
];
