//! Shell patterns: the pattern of a word with unquoted `*`, `?` or `[`, and whether a
//! pattern matches a text as the shell would match a file name.

use crate::shells;

/// The glob pattern of a word with unquoted `*`, `?` or `[`, quoted characters escaped.
pub(super) fn glob_pattern(chars: &[(char, bool)]) -> Option<String> {
    if !chars
        .iter()
        .any(|&(c, q)| !q && shells::quoting::GLOB_CHARS.contains(&c))
    {
        return None;
    }
    let mut pattern = String::with_capacity(chars.len());
    for &(c, quoted) in chars {
        if quoted && matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '^' | '-') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    Some(pattern)
}

/// Whether the glob `pattern` (`*`, `?`, `[…]` with `!`/`^` and ranges, `\` escapes)
/// matches all of `text`, as the shell matches a file name.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `*`: linear-ish, never
    // exponential.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match bracket(&p, pi, t[ti]) {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                // No closing `]`: a literal `[`.
                None => (t[ti] == '[').then_some(1),
            },
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == t[ti]).then_some(2),
            Some(&c) => (c == t[ti]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                pi += len;
                ti += 1;
            }
            None => match star {
                Some((sp, st)) => {
                    pi = sp;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == '*')
}

/// A bracket expression at `p[start]` against `c`: whether it matches, and its length;
/// `None` when it has no closing `]`.
fn bracket(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    // `[[:alpha:]]` and the like: any character may belong to the class.
    let mut class = false;
    let mut first = true;
    while i < p.len() {
        let mut lo = p[i];
        if lo == ']' && !first {
            return Some((class || matched != negate, i + 1 - start));
        }
        if lo == '[' && matches!(p.get(i + 1), Some(':' | '=' | '.')) {
            let close = p
                .get(i + 2..)?
                .windows(2)
                .position(|w| w[0] == p[i + 1] && w[1] == ']')?;
            class = true;
            first = false;
            i += close + 4;
            continue;
        }
        first = false;
        if lo == '\\' && i + 1 < p.len() {
            i += 1;
            lo = p[i];
        }
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&h| h != ']') {
            let mut hi = p[i + 2];
            i += 2;
            if hi == '\\' && i + 1 < p.len() {
                i += 1;
                hi = p[i];
            }
            matched |= lo <= c && c <= hi;
        } else {
            matched |= lo == c;
        }
        i += 1;
    }
    None
}
