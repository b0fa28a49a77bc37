//! Java regular expressions (what Spark's `RLIKE` runs) on the `regex` crate.
//!
//! The two dialects agree on most syntax; where they read the same text differently, the
//! pattern is rewritten to Java's meaning: `\d`, `\w`, `\s` and `\b` are ASCII classes in
//! Java (Unicode in the crate), and `.` excludes every Java line terminator (`\n`, `\r`,
//! U+0085, U+2028, U+2029), not only `\n`. What the crate cannot run (back-references,
//! look-around, possessive quantifiers, atomic groups) is an error naming the pattern, not
//! a different match. Known remaining difference: Java's `(?i)` folds ASCII letters only
//! unless `(?u)` is given; the crate folds Unicode.
//!
//! ```ignore
//! let regex = JavaRegex::new(r"^\d+$").unwrap();
//! assert!(regex.is_match("2026"));
//! assert!(!regex.is_match("٢٠٢٦")); // Arabic-Indic digits are not \d in Java
//! ```

use regex::{Regex, RegexBuilder};

use crate::{PqsiftError, Result};

/// A compiled Java regular expression.
#[derive(Debug, Clone)]
pub struct JavaRegex(Regex);

/// Compiled programs larger than this are refused: a filter is user input, and the crate's
/// compile time and memory grow with repetition counts (`a{1000}{1000}`).
const SIZE_LIMIT: usize = 4 << 20;

impl JavaRegex {
    /// Compiles `pattern` with Java's meaning, or an error naming it.
    pub fn new(pattern: &str) -> Result<Self> {
        let translated = translate(pattern)?;
        RegexBuilder::new(&translated)
            .size_limit(SIZE_LIMIT)
            .build()
            .map(Self)
            .map_err(|e| PqsiftError::filter(format!("invalid regular expression '{pattern}' in RLIKE: {e}")))
    }

    /// Whether the pattern matches somewhere in `text` (Java's `Matcher.find`).
    pub fn is_match(&self, text: &str) -> bool {
        self.0.is_match(text)
    }
}

/// Java's line terminators, which `.` does not match.
const DOT: &str = r"[^\n\r\x{85}\x{2028}\x{2029}]";

fn translate(pattern: &str) -> Result<String> {
    let unsupported = |what: &str| {
        PqsiftError::filter(format!(
            "regular expression '{pattern}' in RLIKE uses {what}, which pqsift cannot evaluate"
        ))
    };
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    // Depth of `[...]` classes (Java nests them for unions); 0 outside any.
    let mut class_depth = 0usize;
    let mut previous_was_quantifier = false;
    while let Some(c) = chars.next() {
        let mut quantifier = false;
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    return Err(unsupported("a trailing backslash"));
                };
                match next {
                    '1'..='9' => return Err(unsupported("a back-reference")),
                    'k' => return Err(unsupported("a named back-reference")),
                    'd' | 'D' | 'w' | 'W' | 's' | 'S' if class_depth > 0 => {
                        // Inside a class only the positive forms have a plain equivalent.
                        out.push_str(match next {
                            'd' => "0-9",
                            'w' => "0-9A-Za-z_",
                            's' => r" \t\n\x0B\f\r",
                            _ => return Err(unsupported("a negated class escape inside [...]")),
                        });
                    }
                    // Java's \s is [ \t\n\x0B\f\r]: the crate's ASCII \s lacks \x0B.
                    's' => out.push_str(r"[ \t\n\x0B\f\r]"),
                    'S' => out.push_str(r"[^ \t\n\x0B\f\r]"),
                    'd' => out.push_str("[0-9]"),
                    'D' => out.push_str("[^0-9]"),
                    'w' => out.push_str("[0-9A-Za-z_]"),
                    'W' => out.push_str("[^0-9A-Za-z_]"),
                    // The crate's ASCII word boundary, which it runs on text too.
                    'b' | 'B' => {
                        out.push_str("(?-u:\\");
                        out.push(next);
                        out.push(')');
                    }
                    'Q' => {
                        // \Q...\E quotes literally.
                        let mut quoted = String::new();
                        while let Some(q) = chars.next() {
                            if q == '\\' && chars.peek() == Some(&'E') {
                                chars.next();
                                break;
                            }
                            quoted.push(q);
                        }
                        out.push_str(&regex::escape(&quoted));
                    }
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            '[' => {
                class_depth += 1;
                out.push('[');
                // A `]` or `^]` right after the opening is a literal in both dialects.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(']');
            }
            '.' if class_depth == 0 => out.push_str(DOT),
            '(' if class_depth == 0 && chars.peek() == Some(&'?') => {
                out.push('(');
                let mut lookahead = chars.clone();
                lookahead.next();
                match (lookahead.next(), lookahead.next()) {
                    (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => return Err(unsupported("a look-around")),
                    (Some('>'), _) => return Err(unsupported("an atomic group")),
                    (Some('<'), _) => {
                        // Java's named group `(?<name>...)` is the crate's `(?P<name>...)`.
                        chars.next();
                        out.push_str("?P");
                    }
                    _ => {}
                }
            }
            '*' | '+' | '?' | '}' if class_depth == 0 => {
                if c == '+' && previous_was_quantifier {
                    return Err(unsupported("a possessive quantifier"));
                }
                out.push(c);
                // `a*?` (lazy) is fine; `a*+` (possessive) is not.
                quantifier = c != '?' || !previous_was_quantifier;
            }
            other => out.push(other),
        }
        previous_was_quantifier = quantifier;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        JavaRegex::new(pattern).unwrap().is_match(text)
    }

    #[test]
    fn classes_are_ascii_as_in_java() {
        assert!(matches(r"^\d+$", "2026"));
        assert!(!matches(r"^\d+$", "٢٠٢٦"));
        assert!(matches(r"^[\d-]+$", "2026-01"));
        assert!(!matches(r"\w", "é"));
        assert!(matches(r"\W", "é"));
        assert!(matches(r"a\sb", "a\u{b}b"));
        assert!(!matches(r"a\sb", "a\u{a0}b"));
        assert!(matches(r"\bcat\b", "a cat!"));
    }

    #[test]
    fn dot_excludes_java_line_terminators() {
        assert!(matches("a.b", "axb"));
        assert!(!matches("a.b", "a\rb"));
        assert!(!matches("a.b", "a\u{2028}b"));
        assert!(matches("a[.]b", "a.b"));
    }

    #[test]
    fn quoting_named_groups_and_quantifiers() {
        assert!(matches(r"\Qa.b\E", "xa.by"));
        assert!(!matches(r"\Qa.b\E", "axb"));
        assert!(matches(r"(?<year>\d{4})-", "2026-"));
        assert!(matches("a*?b", "aab"));
        assert!(matches("find", "where to find it"));
    }

    #[test]
    fn what_the_crate_cannot_run_is_refused() {
        for pattern in [r"(a)\1", "a(?=b)", "(?<!a)b", "a*+", "(?>a)", r"\k<x>"] {
            let error = JavaRegex::new(pattern).unwrap_err().to_string();
            assert!(error.contains(pattern), "{error}");
        }
        assert!(JavaRegex::new("a(").unwrap_err().to_string().contains("invalid regular expression 'a('"));
    }
}
