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
    let message = outside_message(qwen, Path::new("/p-old"), Path::new("/p"));
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
