//! The real-agents tier, `cargo test --test real_agents`: the agents themselves (Claude
//! Code, Codex CLI, Gemini CLI, Qwen Code, Aider) at the releases `tests/agents/` pins,
//! installed from npm and PyPI into `target/`, and gate beside Codex's own rule checker.
//! It needs the network the first time and root for the tests that give an agent's
//! account gate as its login shell. `tests/agents/latest.sh` runs it at the agents'
//! newest releases.

#[macro_use]
mod common;

#[path = "import_codex.rs"]
mod import_codex;
#[path = "real_aider.rs"]
mod real_aider;
#[path = "real_claude.rs"]
mod real_claude;
#[path = "real_codex.rs"]
mod real_codex;
#[path = "real_gemini.rs"]
mod real_gemini;
#[path = "real_qwen.rs"]
mod real_qwen;
