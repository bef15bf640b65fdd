//! The configuration's unit tests, by concern; the helpers every one uses are here.

use super::*;
use std::ffi::{OsStr, OsString};

mod files;
mod layers;
mod loading;
mod lock;
mod project;

fn file(text: &str) -> Result<Layer, ConfigError> {
    parse_file(
        Path::new("/etc/gate/config.toml"),
        text,
        FileKind::System,
        Some(Path::new("/home/u")),
    )
}

fn user_file(text: &str) -> Result<Layer, ConfigError> {
    parse_file(
        Path::new("/home/u/.config/gate/config.toml"),
        text,
        FileKind::User,
        Some(Path::new("/home/u")),
    )
}

fn err(r: Result<Layer, ConfigError>) -> String {
    r.unwrap_err().to_string()
}

fn layer_with(f: impl FnOnce(&mut Layer)) -> Layer {
    let mut l = Layer::default();
    f(&mut l);
    l
}

fn flag(name: &'static str) -> Origin {
    Origin::Flag(name)
}

fn locked_system() -> Layer {
    file("lock = true\nlevel = \"safe\"\nallow = [\"ls\"]\n[approval]\ntimeout = 30\ntty = false\n")
        .unwrap()
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| OsString::from(v))
    }
}

fn project_file(text: &str, trusted: bool) -> Layer {
    let mut layer = parse_file(
        Path::new("/src/repo/.gate.toml"),
        text,
        FileKind::Project,
        Some(Path::new("/home/u")),
    )
    .unwrap();
    if !trusted {
        layer.untrusted = Some(Untrusted {
            file: Arc::from(Path::new("/src/repo/.gate.toml")),
            why: "is not trusted".into(),
        });
    }
    layer
}
