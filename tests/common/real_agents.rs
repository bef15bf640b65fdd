//! The real agents, for the tests in `tests/real_*.rs`: installed at pinned versions by
//! `tests/agents/install.sh` and driven by a scripted fake model
//! (`tests/agents/fake_model.py`) on 127.0.0.1. What the fake model receives back as a
//! tool result is what the model would have seen.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Install `agent` (claude, codex, gemini, qwen, aider) if the cache lacks it, and
/// return its executable. Panics with the installer's output when that fails: a test
/// of a real agent that cannot get the agent must fail, not pass or skip.
pub fn install(agent: &str) -> PathBuf {
    assert_eq!(
        env!("CARGO_CRATE_NAME"),
        "real_agents",
        "installing {agent} needs npm or PyPI: a test that installs a real agent belongs in \
         the real_agents tier (tests/real_agents.rs), not in the hermetic one"
    );
    let output = Command::new("sh")
        .arg(repo().join("tests/agents/install.sh"))
        .arg(agent)
        .stdin(Stdio::null())
        .output()
        .expect("cannot run tests/agents/install.sh");
    assert!(
        output.status.success(),
        "installing {agent} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = String::from_utf8(output.stdout).unwrap();
    PathBuf::from(path.trim())
}

/// A fake model server speaking one provider protocol, killed when dropped.
pub struct FakeModel {
    child: Child,
    pub port: u16,
    record: PathBuf,
}

impl FakeModel {
    /// Start it with `script` (see `tests/agents/fake_model.py`), keeping its files in
    /// `dir`.
    pub fn start(protocol: &str, script: &Value, dir: &Path) -> FakeModel {
        let script_path = dir.join(format!("fake-model-{protocol}.json"));
        std::fs::write(&script_path, serde_json::to_vec(script).unwrap()).unwrap();
        let record = dir.join(format!("fake-model-{protocol}.jsonl"));
        let _ = std::fs::remove_file(&record);
        let mut child = Command::new(super::python3())
            .arg(repo().join("tests/agents/fake_model.py"))
            .args(["--protocol", protocol, "--script"])
            .arg(&script_path)
            .arg("--record")
            .arg(&record)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start the fake model");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the fake model did not start: {line:?}"));
        FakeModel {
            child,
            port,
            record,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The tool results of the longest conversation received: what the model saw of
    /// each command, in order.
    pub fn tool_results(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter_map(|r| r["tool_results"].as_array().cloned())
            .max_by_key(|r| r.len())
            .unwrap_or_default()
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
