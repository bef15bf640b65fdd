//! The compound-mode front end, `compound::split`.
//!
//! Input: UTF-8 text, the command. When `split` returns parts, each must be a non-empty
//! slice of the command, in source order, trimmed of blanks, free of every shell and
//! control character; and the text between them must be nothing but blanks around
//! exactly one of `&&`, `||`, `;`, `|` (so that nothing, such as a comment, was dropped).
//! `split` must also give the same answer twice.

use gate::policy::compound;

pub fn check(data: &[u8]) {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let result = compound::split(command);
    assert_eq!(
        compound::split(command),
        result,
        "compound::split({command:?}) is not deterministic"
    );
    let Some(parts) = result else {
        return;
    };
    assert!(!parts.is_empty(), "split({command:?}) returned no part");
    let base = command.as_ptr() as usize;
    let mut pos = 0;
    for (i, part) in parts.iter().enumerate() {
        let start = (part.as_ptr() as usize)
            .checked_sub(base)
            .unwrap_or_else(|| panic!("part {part:?} is not a slice of {command:?}"));
        assert!(
            start >= pos && start + part.len() <= command.len(),
            "part {part:?} of {command:?} is not a slice after the previous part"
        );
        let gap = command[pos..start].trim_matches([' ', '\t']);
        if i == 0 {
            assert!(gap.is_empty(), "{command:?}: {gap:?} before the first part");
        } else {
            assert!(
                ["&&", "||", ";", "|"].contains(&gap),
                "{command:?}: {gap:?} between two parts is not one operator"
            );
        }
        assert!(!part.is_empty(), "{command:?}: an empty part");
        assert_eq!(
            part.trim_matches([' ', '\t']),
            *part,
            "{command:?}: part {part:?} is not trimmed"
        );
        assert!(
            !part
                .chars()
                .any(|c| ";&|<>$`(){}\\\n".contains(c) || (c.is_control() && c != '\t')),
            "{command:?}: part {part:?} holds a shell or control character"
        );
        pos = start + part.len();
    }
    let rest = command[pos..].trim_matches([' ', '\t']);
    assert!(
        rest.is_empty(),
        "{command:?}: {rest:?} after the last part was dropped"
    );
}
