//! Brace expansion as bash and zsh do it (`{a,b}`, `{1..3}`, `{a..e}`), on unquoted braces
//! only, within the scanner's budget.

use super::{Budget, MAX_BRACE_WORDS};

/// Brace expansion of one word (`{rm,-rf}` → `rm`, `-rf`; `a{b,c}d` → `abd`, `acd`;
/// `{r..r}m` → `rm`; `{1..3}` → `1`, `2`, `3`), on unquoted braces only. Past the
/// budget it marks the text too complex.
pub(super) fn brace_expand(chars: &[(char, bool)], budget: &mut Budget) -> Vec<Vec<(char, bool)>> {
    let mut results = Vec::new();
    if !chars.iter().any(|&(c, q)| c == '{' && !q) {
        results.push(chars.to_vec());
        return results;
    }
    let mut todo = vec![chars.to_vec()];
    while let Some(word) = todo.pop() {
        if budget.exceeded {
            return results;
        }
        match find_brace_group(&word, budget) {
            Some((open, close, alternatives)) => {
                // In reverse, so that the work list yields them in order.
                for alt in alternatives.into_iter().rev() {
                    let mut combined: Vec<(char, bool)> =
                        Vec::with_capacity(open + alt.len() + word.len() - close);
                    combined.extend_from_slice(&word[..open]);
                    combined.extend(alt);
                    combined.extend_from_slice(&word[close + 1..]);
                    if !budget.spend(combined.len()) {
                        return results;
                    }
                    todo.push(combined);
                }
            }
            None => {
                results.push(word);
                if results.len() > MAX_BRACE_WORDS {
                    budget.exceeded = true;
                    return results;
                }
            }
        }
    }
    results
}

/// The first unquoted `{…}` that brace expansion expands: one with a top-level comma
/// (its alternatives), or a sequence `{X..Y}` / `{X..Y..STEP}` of integers or of single
/// letters. Returns (open, close, the alternatives).
type BraceGroup = (usize, usize, Vec<Vec<(char, bool)>>);

fn find_brace_group(chars: &[(char, bool)], budget: &mut Budget) -> Option<BraceGroup> {
    for open in 0..chars.len() {
        if chars[open] != ('{', false) {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (j, &(c, quoted)) in chars.iter().enumerate().skip(open + 1) {
            if quoted {
                continue;
            }
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    if commas.is_empty() {
                        if let Some(seq) = sequence(&chars[open + 1..j], budget) {
                            return Some((open, j, seq));
                        }
                        break;
                    }
                    let mut alternatives = Vec::with_capacity(commas.len() + 1);
                    let mut start = open + 1;
                    for end in commas.into_iter().chain(std::iter::once(j)) {
                        alternatives.push(chars[start..end].to_vec());
                        start = end + 1;
                    }
                    return Some((open, j, alternatives));
                }
                '}' => depth -= 1,
                ',' if depth == 0 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

/// A brace sequence's words, when `inner` (between the braces) is one: `a..e`, `1..10`,
/// `01..3` (padded), `10..1..3`. One that would produce more than [`MAX_BRACE_WORDS`]
/// words marks the text too complex.
fn sequence(inner: &[(char, bool)], budget: &mut Budget) -> Option<Vec<Vec<(char, bool)>>> {
    if inner.iter().any(|&(_, q)| q) {
        return None;
    }
    let text: String = inner.iter().map(|&(c, _)| c).collect();
    let parts: Vec<&str> = text.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, s] => (*a, *b, Some(*s)),
        _ => return None,
    };
    let step: i128 = match step {
        Some(s) => s.parse::<i128>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let letter = |s: &str| {
        let mut cs = s.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c),
            _ => None,
        }
    };
    let mut words = Vec::new();
    if let (Some(a), Some(b)) = (letter(from), letter(to)) {
        let (a, b) = (a as i128, b as i128);
        let mut v = a;
        loop {
            let c = char::from_u32(v as u32)?;
            words.push(vec![(c, false)]);
            if v == b {
                break;
            }
            v += if b > a { step } else { -step };
            if (b > a && v > b) || (b < a && v < b) {
                break;
            }
        }
        return Some(words);
    }
    let number = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i128>().ok())
            .flatten()
    };
    let (a, b) = (number(from)?, number(to)?);
    let count = (a - b).unsigned_abs() / step as u128 + 1;
    if count > MAX_BRACE_WORDS as u128 {
        budget.exceeded = true;
        return Some(vec![Vec::new()]);
    }
    let padded = |s: &str| {
        let d = s.strip_prefix('-').unwrap_or(s);
        d.len() > 1 && d.starts_with('0')
    };
    let width = if padded(from) || padded(to) {
        from.len().max(to.len())
    } else {
        0
    };
    let mut v = a;
    loop {
        let s = if v < 0 {
            format!("-{:0w$}", -v, w = width.saturating_sub(1))
        } else {
            format!("{v:0width$}")
        };
        words.push(s.chars().map(|c| (c, false)).collect());
        if v == b {
            break;
        }
        v += if b > a { step } else { -step };
        if (b > a && v > b) || (b < a && v < b) {
            break;
        }
    }
    Some(words)
}
