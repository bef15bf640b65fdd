use super::*;

fn env<'a>(set: &'a [&'a str]) -> impl Fn(&str) -> Option<OsString> + 'a {
    move |name| set.contains(&name).then(|| OsString::from("1"))
}

#[test]
fn the_agent_that_chooses_the_cwd_is_known_by_its_marker() {
    assert_eq!(cwd_chooser(&env(&[])), None);
    assert_eq!(cwd_chooser(&env(&["HOME"])), None);
    assert_eq!(
        cwd_chooser(&env(&["CODEX_THREAD_ID"])).unwrap().agent,
        "Codex"
    );
    assert_eq!(
        cwd_chooser(&env(&["QWEN_CODE"])).unwrap().agent,
        "Qwen Code"
    );
}

#[test]
fn without_a_marker_any_directory_is_the_workspace() {
    assert_eq!(agent_workspace(Path::new("/"), &env(&[])), Ok(()));
}

#[test]
fn the_refusal_names_the_agent_its_directory_and_the_models_argument() {
    let qwen = &CHOOSES_CWD[1];
    let message = WorkspaceError::Outside {
        chooser: qwen,
        cwd: "/p-old".into(),
        agent_dir: "/p".into(),
    }
    .line();
    assert!(
        message.starts_with(
            "Qwen Code runs this command in /p-old, outside the directory Qwen Code \
                 works in (/p);"
        ),
        "{message}"
    );
    assert!(message.contains("(run_shell_command's directory); nothing was run"));
    assert!(!message.contains('\n'));
}

/// Both lines as they read when they were built as strings where they arose.
#[test]
fn the_workspace_errors_read_as_they_did_when_they_were_strings() {
    let qwen = &CHOOSES_CWD[1];
    let outside = WorkspaceError::Outside {
        chooser: qwen,
        cwd: "/p-old".into(),
        agent_dir: "/p".into(),
    };
    assert_eq!(
        outside.line(),
        format!(
            "{agent} runs this command in /p-old, outside the directory {agent} works in \
             (/p); the safe level makes the working directory writable, and the model chose \
             this one ({argument}); nothing was run. Run it in the project, or start {agent} in \
             the directory it may write",
            agent = qwen.agent,
            argument = qwen.argument,
        )
    );
    let unknown = WorkspaceError::Unknown {
        chooser: qwen,
        cause: "No such file or directory (os error 2)".into(),
    };
    assert_eq!(
        unknown.line(),
        format!(
            "gate runs under {agent} ({marker} is set) and cannot tell which directory \
             {agent} works in (No such file or directory (os error 2)), so the safe level has \
             no workspace it can trust; nothing was run",
            agent = qwen.agent,
            marker = qwen.marker,
        )
    );
}
