//! Java regular expressions (what Spark's `RLIKE` runs) on the `regex` crate.
//!
//! The two dialects agree on most syntax; where they read the same text differently, the
//! pattern is rewritten to Java's meaning, with Java's flags (`(?i)`, `(?s)`, `(?x)`,
//! `(?u)`, `(?d)`) kept by the translation rather than handed to the crate:
//! - `\d`, `\w`, `\s`, the POSIX classes (`\p{Alpha}`, `\p{Lower}`, ...) and `\b` are
//!   ASCII in Java (Unicode in the crate); `\h` and `\v` are Java's;
//! - `(?i)` folds ASCII letters only unless `(?u)` is given (the crate folds Unicode:
//!   `(?i)é` matches `É`, and `k` the Kelvin sign);
//! - `.` excludes every Java line terminator (`\n`, `\r`, U+0085, U+2028, U+2029), not
//!   only `\n`;
//! - `$` matches at the end and also before a line terminator that ends the text (the
//!   crate's only at the end): a pattern whose `$` ends it is run a second time on the
//!   text without that terminator;
//! - `[[:alpha:]]` is a nested class of five characters in Java, not a POSIX class.
//!
//! What the crate cannot run as Java does (back-references, look-around, possessive
//! quantifiers, atomic groups, `\R`, multi-line anchors, `(?U)`, blocks, classes under
//! `(?iu)`) is an error naming the pattern, not a different match. `\b` is ASCII as in
//! Java 19 and later; Java 17 takes any letter or digit for a word character.
//!
//! ```ignore
//! let regex = JavaRegex::new(r"^\d+$").unwrap();
//! assert!(regex.is_match("2026"));
//! assert!(regex.is_match("2026\n")); // `$` before a final line break
//! assert!(!regex.is_match("٢٠٢٦")); // Arabic-Indic digits are not \d in Java
//! ```

use regex::{Regex, RegexBuilder};

use crate::{PqsiftError, Result};

/// A compiled Java regular expression.
#[derive(Debug, Clone)]
pub struct JavaRegex {
    regex: Regex,
    /// Which line terminators a `$` may stand before at the end of the text, where the
    /// pattern has a `$` (translated to the crate's end of text).
    dollar: Option<LineTerminators>,
}

/// The line terminators of Java's `$`: all of Java's, or `\n` alone (`(?d)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineTerminators {
    Java,
    Unix,
}

impl LineTerminators {
    /// `text` without the line terminator that ends it, if one does (`\r\n` as one).
    #[inline]
    fn strip(self, text: &str) -> Option<&str> {
        // The UTF-8 of every terminator ends in one of these bytes: most texts are ruled
        // out by their last byte.
        if !matches!(text.as_bytes().last(), Some(b'\n' | b'\r' | 0x85 | 0xA8 | 0xA9)) {
            return None;
        }
        match self {
            Self::Unix => text.strip_suffix('\n'),
            Self::Java => {
                text.strip_suffix("\r\n").or_else(|| text.strip_suffix(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']))
            }
        }
    }
}

/// Compiled programs larger than this are refused: a filter is user input, and the crate's
/// compile time and memory grow with repetition counts (`a{1000}{1000}`).
const SIZE_LIMIT: usize = 4 << 20;

impl JavaRegex {
    /// Compiles `pattern` with Java's meaning, or an error naming it.
    pub fn new(pattern: &str) -> Result<Self> {
        let (translated, dollar) = Translator::new(pattern).translate()?;
        let regex = RegexBuilder::new(&translated)
            .size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| PqsiftError::filter(format!("invalid regular expression '{pattern}' in RLIKE: {e}")))?;
        Ok(Self { regex, dollar })
    }

    /// Whether the pattern matches somewhere in `text` (Java's `Matcher.find`).
    #[inline]
    pub fn is_match(&self, text: &str) -> bool {
        if self.regex.is_match(text) {
            return true;
        }
        // Java's `$` also matches before a final line terminator. Every `$` ends the
        // pattern (checked when translating), so matching there is matching the text
        // without it.
        self.dollar.and_then(|terminators| terminators.strip(text)).is_some_and(|text| self.regex.is_match(text))
    }
}

/// Java's line terminators, which `.` does not match.
const DOT: &str = r"[^\n\r\x{85}\x{2028}\x{2029}]";
/// Java's `\s` (`[ \t\n\x0B\f\r]`), `\h` and `\v`, as class items.
const SPACE: &str = r"\x20\t\n\x0B\f\r";
const HORIZONTAL_SPACE: &str = r"\x20\t\xA0\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}";
const VERTICAL_SPACE: &str = r"\n\x0B\f\r\x{85}\x{2028}\x{2029}";

/// The letters after a backslash that stand for a class (`\d`, `\p{..}`): see
/// [`Translator::class_escape`].
const CLASS_ESCAPES: &str = "dDwWsShHvVpP";

/// Why `[^a[b]]` and `[^a&&b]` are refused.
const NEGATED_NESTING: &str = "a nested class or && in a negated class (read differently across Java versions)";

/// Java's pattern flags that change what the translation writes.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    /// `(?i)`: ASCII letters in any case, or all letters with `unicode_case`.
    case_insensitive: bool,
    /// `(?u)`: with `case_insensitive`, every letter folds.
    unicode_case: bool,
    /// `(?s)`: `.` matches line terminators too.
    dot_all: bool,
    /// `(?d)`: `\n` is the only line terminator.
    unix_lines: bool,
    /// `(?x)`: whitespace and `#` comments are ignored.
    comments: bool,
    /// `(?m)`: `^` and `$` at line ends (refused where used).
    multiline: bool,
}

impl Flags {
    /// Folding ASCII letters only (Java's `(?i)` without `(?u)`).
    fn ascii_fold(self) -> bool {
        self.case_insensitive && !self.unicode_case
    }

    /// Folding as the crate does (`(?iu)`).
    fn unicode_fold(self) -> bool {
        self.case_insensitive && self.unicode_case
    }
}

/// Rewrites a Java pattern as the crate's, one construct at a time.
struct Translator<'a> {
    /// The Java pattern, for messages.
    pattern: &'a str,
    chars: Vec<char>,
    /// The next character to read.
    at: usize,
    /// The flags in force at `at`.
    flags: Flags,
    /// The flags outside each open group, restored when it closes.
    groups: Vec<Flags>,
    /// The crate's pattern so far.
    out: String,
    /// The terminators of the `$`s (and `\Z`s) written so far, if any.
    dollar: Option<LineTerminators>,
    /// Whether a `\z` was written (which the second match without the terminator would
    /// misread).
    end_of_text: bool,
}

impl<'a> Translator<'a> {
    fn new(pattern: &'a str) -> Self {
        Self {
            pattern,
            chars: pattern.chars().collect(),
            at: 0,
            flags: Flags::default(),
            groups: Vec::new(),
            out: String::with_capacity(pattern.len() + 16),
            dollar: None,
            end_of_text: false,
        }
    }

    fn unsupported(&self, what: &str) -> PqsiftError {
        PqsiftError::filter(format!(
            "regular expression '{}' in RLIKE uses {what}, which pqsift cannot evaluate",
            self.pattern
        ))
    }

    fn invalid(&self, why: &str) -> PqsiftError {
        PqsiftError::filter(format!("invalid regular expression '{}' in RLIKE: {why}", self.pattern))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    /// Skips whitespace and `#` comments in comments mode (`(?x)`), as Java does everywhere
    /// but in `\Q...\E`.
    fn skip_comments(&mut self) {
        self.at = skip_comments(&self.chars, self.at, self.flags);
    }

    /// The crate's pattern, and the line terminators a `$` may stand before.
    fn translate(mut self) -> Result<(String, Option<LineTerminators>)> {
        let mut previous_was_quantifier = false;
        loop {
            self.skip_comments();
            let Some(c) = self.next() else { break };
            let mut quantifier = false;
            match c {
                '\\' => self.escape()?,
                '[' => self.top_class()?,
                '.' => self.out.push_str(match (self.flags.dot_all, self.flags.unix_lines) {
                    (true, _) => "(?s:.)",
                    (false, true) => r"[^\n]",
                    (false, false) => DOT,
                }),
                '^' if self.flags.multiline => return Err(self.unsupported("a multi-line anchor ((?m) with ^ or $)")),
                '^' => self.out.push('^'),
                '$' => self.end_before_terminator(true)?,
                '(' => self.group()?,
                ')' => {
                    self.flags = self.groups.pop().ok_or_else(|| self.invalid("unmatched )"))?;
                    self.out.push(')');
                }
                '*' | '+' | '?' => {
                    if c == '+' && previous_was_quantifier {
                        return Err(self.unsupported("a possessive quantifier"));
                    }
                    self.out.push(c);
                    // `a*?` (lazy) is fine; `a*+` (possessive) is not.
                    quantifier = c != '?' || !previous_was_quantifier;
                }
                '{' => match self.chars[self.at..].iter().position(|&c| c == '}') {
                    // A repetition's bounds, copied as they are (the crate checks them).
                    Some(length) => {
                        self.out.push('{');
                        self.out.extend(&self.chars[self.at..=self.at + length]);
                        self.at += length + 1;
                        quantifier = true;
                    }
                    None => self.out.push('{'),
                },
                '|' => self.out.push('|'),
                other => self.literal(other),
            }
            previous_was_quantifier = quantifier;
        }
        if self.end_of_text && self.dollar.is_some() {
            return Err(self.unsupported(r"\z together with $ or \Z"));
        }
        Ok((self.out, self.dollar))
    }

    /// What follows a backslash outside a class.
    fn escape(&mut self) -> Result<()> {
        let Some(c) = self.next() else {
            return Err(self.unsupported("a trailing backslash"));
        };
        match c {
            '1'..='9' => return Err(self.unsupported("a back-reference")),
            'k' => return Err(self.unsupported("a named back-reference")),
            'G' => return Err(self.unsupported(r"\G")),
            'X' => return Err(self.unsupported(r"a grapheme cluster (\X)")),
            'N' => return Err(self.unsupported(r"a character name (\N{...})")),
            c if CLASS_ESCAPES.contains(c) => {
                let class = self.class_escape(c)?;
                self.out.push_str(&class);
            }
            // Java matches `\r\n` whole where it can (atomically), which needs a look-ahead.
            'R' => return Err(self.unsupported(r"\R (a line break, matched atomically)")),
            // The crate's ASCII word boundary, which it runs on text too. (Java 19 and later;
            // Java 17's `\b` takes any letter or digit for a word character.)
            'b' => self.out.push_str(r"(?-u:\b)"),
            'B' => self.out.push_str(r"(?-u:\B)"),
            'A' => self.out.push_str(r"\A"),
            'z' => {
                self.end_of_text = true;
                self.out.push_str(r"\z");
            }
            // `\Z` is `$` without `(?m)`.
            'Z' => self.end_before_terminator(false)?,
            // With the flags: `(?i)\Qa\E` matches `A`.
            'Q' => self.quoted().into_iter().for_each(|q| self.literal(q)),
            other => {
                let literal = self.escaped_char(other)?;
                self.literal(literal);
            }
        }
        Ok(())
    }

    /// The character an escape other than a class or an anchor stands for (`c` follows the
    /// backslash). A backslash before another ASCII letter is an error in Java; before any
    /// other character it quotes it.
    fn escaped_char(&mut self, c: char) -> Result<char> {
        let code = |translator: &Self, value: Option<u32>| {
            value.and_then(char::from_u32).ok_or_else(|| translator.invalid("an invalid character escape"))
        };
        Ok(match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\x0C',
            'a' => '\x07',
            'e' => '\x1B',
            // One to three octal digits, at most 0377.
            '0' => {
                let (mut value, mut digits) = (0u32, 0);
                while let Some(digit) = self.peek().and_then(|d| d.to_digit(8))
                    && digits < 3
                    && value * 8 + digit <= 0o377
                {
                    value = value * 8 + digit;
                    digits += 1;
                    self.at += 1;
                }
                code(self, (digits > 0).then_some(value))?
            }
            'x' if self.peek() == Some('{') => {
                let end = self.chars[self.at..].iter().position(|&c| c == '}');
                let digits: Option<String> = end.map(|end| self.chars[self.at + 1..self.at + end].iter().collect());
                self.at += end.map_or(0, |end| end + 1);
                code(self, digits.and_then(|digits| u32::from_str_radix(&digits, 16).ok()))?
            }
            'x' | 'u' => {
                let count = if c == 'x' { 2 } else { 4 };
                let digits: String = self.chars[self.at..].iter().take(count).collect();
                self.at += digits.chars().count();
                let value = (digits.chars().count() == count).then(|| u32::from_str_radix(&digits, 16).ok()).flatten();
                code(self, value)?
            }
            'c' => {
                let control = self.next().map(|c| c as u32 ^ 64);
                code(self, control)?
            }
            other if other.is_ascii_alphabetic() => return Err(self.invalid(&format!(r"an illegal escape \{other}"))),
            other => other,
        })
    }

    /// The characters of `\Q...\E` (the `\Q` read), quoted literally up to `\E` or the end.
    fn quoted(&mut self) -> Vec<char> {
        let mut quoted = Vec::new();
        while let Some(q) = self.next() {
            if q == '\\' && self.peek() == Some('E') {
                self.at += 1;
                break;
            }
            quoted.push(q);
        }
        quoted
    }

    /// A literal character outside a class, folded as the flags say.
    fn literal(&mut self, c: char) {
        if self.flags.ascii_fold() && c.is_ascii_alphabetic() {
            self.out.push('[');
            self.out.push(c.to_ascii_lowercase());
            self.out.push(c.to_ascii_uppercase());
            self.out.push(']');
        } else if self.flags.unicode_fold() && matches!(c, 'i' | 'I' | '\u{130}' | '\u{131}') {
            // Java's Unicode folding compares `toLowerCase(toUpperCase(c))`, which is `i` for
            // the dotted and dotless i too; Unicode's simple case folding keeps those apart.
            self.out.push_str("[iI\u{130}\u{131}]");
        } else if self.flags.unicode_fold() {
            self.out.push_str("(?i:");
            push_literal(&mut self.out, c);
            self.out.push(')');
        } else {
            push_literal(&mut self.out, c);
        }
    }

    /// `\d \D \w \W \s \S \h \H \v \V \p{..} \P{..}` as a class the crate reads alike inside
    /// and outside brackets.
    fn class_escape(&mut self, c: char) -> Result<String> {
        let items = match c.to_ascii_lowercase() {
            'd' => "0-9",
            'w' => "0-9A-Za-z_",
            's' => SPACE,
            'h' => HORIZONTAL_SPACE,
            'v' => VERTICAL_SPACE,
            _ => return self.property(c == 'P'),
        };
        Ok(format!("[{}{items}]", if c.is_ascii_uppercase() { "^" } else { "" }))
    }

    /// `\p{name}` or `\pL` (the `p` read), with Java's names: the POSIX ones are ASCII.
    fn property(&mut self, negated: bool) -> Result<String> {
        let name: String = match self.next() {
            Some('{') => {
                let end = self.chars[self.at..]
                    .iter()
                    .position(|&c| c == '}')
                    .ok_or_else(|| self.invalid(r"an unclosed \p{"))?;
                let name = self.chars[self.at..self.at + end].iter().collect();
                self.at += end + 1;
                name
            }
            Some(c) => c.to_string(),
            None => return Err(self.invalid(r"\p without a name")),
        };
        let class = java_property(&name, self.flags).map_err(|problem| match problem {
            PropertyProblem::Unknown => self.invalid(&format!("an unknown character property {name}")),
            PropertyProblem::Unsupported(what) => self.unsupported(&format!("{what} (\\p{{{name}}})")),
        })?;
        Ok(match (class, negated) {
            (Property::Items(items), negated) => format!("[{}{items}]", if negated { "^" } else { "" }),
            (Property::Crate(name), false) => format!(r"\p{{{name}}}"),
            (Property::Crate(name), true) => format!(r"\P{{{name}}}"),
        })
    }

    /// A class at the top level (the `[` read).
    fn top_class(&mut self) -> Result<()> {
        // Java folds a range under (?iu) one way only: `[A-Z]` does not match the Kelvin
        // sign, `[a-z]` does.
        if self.flags.unicode_fold() {
            return Err(self.unsupported("a character class under (?iu)"));
        }
        let class = self.class()?;
        self.out.push_str(&class);
        Ok(())
    }

    /// A class (the `[` read) as the crate's, with ASCII letters folded under `(?i)`.
    fn class(&mut self) -> Result<String> {
        let mut class = String::from("[");
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
            class.push('^');
        }
        let mut first = true;
        loop {
            self.skip_comments();
            let c = self.next().ok_or_else(|| self.invalid("an unclosed character class"))?;
            match c {
                ']' if !first => break,
                '[' if negated => return Err(self.unsupported(NEGATED_NESTING)),
                '&' if negated && self.peek() == Some('&') => return Err(self.unsupported(NEGATED_NESTING)),
                '[' => {
                    let nested = self.class()?;
                    class.push_str(&nested);
                }
                '&' if self.peek() == Some('&') => {
                    self.at += 1;
                    class.push_str("&&");
                }
                '\\' => {
                    let escaped = self.next().ok_or_else(|| self.unsupported("a trailing backslash"))?;
                    match escaped {
                        escaped if CLASS_ESCAPES.contains(escaped) => {
                            class.push_str(&self.class_escape(escaped)?);
                        }
                        'Q' => self.quoted().into_iter().for_each(|q| self.push_class_range(&mut class, q, q)),
                        other => {
                            let low = self.escaped_char(other)?;
                            self.class_atom(&mut class, low)?;
                        }
                    }
                }
                other => self.class_atom(&mut class, other)?,
            }
            first = false;
        }
        class.push(']');
        Ok(class)
    }

    /// A character in a class, or the low end of a range `low-high`.
    fn class_atom(&mut self, class: &mut String, low: char) -> Result<()> {
        let range_follows = self.peek() == Some('-') && !matches!(self.chars.get(self.at + 1), None | Some(']' | '['));
        if !range_follows {
            self.push_class_range(class, low, low);
            return Ok(());
        }
        self.at += 1;
        let high = match self.next() {
            Some('\\') => {
                let escaped = self.next().ok_or_else(|| self.unsupported("a trailing backslash"))?;
                self.escaped_char(escaped)?
            }
            Some(high) => high,
            None => return Err(self.invalid("an unclosed character class")),
        };
        if high < low {
            return Err(self.invalid(&format!("an illegal character range {low}-{high}")));
        }
        self.push_class_range(class, low, high);
        Ok(())
    }

    /// `low-high` in a class, with its ASCII letters' other case under `(?i)`.
    fn push_class_range(&self, class: &mut String, low: char, high: char) {
        push_literal(class, low);
        if high != low {
            class.push('-');
            push_literal(class, high);
        }
        if self.flags.ascii_fold() {
            for letters in ['a'..='z', 'A'..='Z'] {
                let (from, to) = (low.max(*letters.start()), high.min(*letters.end()));
                if from <= to {
                    let swap =
                        |c: char| if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() };
                    class.push(swap(from));
                    class.push('-');
                    class.push(swap(to));
                }
            }
        }
    }

    /// A group's opening (the `(` read): capturing, named, non-capturing or flags.
    fn group(&mut self) -> Result<()> {
        if self.peek() != Some('?') {
            self.groups.push(self.flags);
            self.out.push('(');
            return Ok(());
        }
        self.at += 1;
        match (self.peek(), self.chars.get(self.at + 1)) {
            (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => return Err(self.unsupported("a look-around")),
            (Some('>'), _) => return Err(self.unsupported("an atomic group")),
            (Some('<'), _) => {
                // Java's named group `(?<name>...)` is the crate's `(?P<name>...)`.
                self.at += 1;
                self.groups.push(self.flags);
                self.out.push_str("(?P<");
                while let Some(c) = self.next() {
                    self.out.push(c);
                    if c == '>' {
                        break;
                    }
                }
                return Ok(());
            }
            _ => {}
        }
        // Flags, for the rest of the group `(?i)` or within it `(?i:...)`.
        let (mut flags, mut on) = (self.flags, true);
        loop {
            match self.next() {
                Some('-') => on = false,
                Some('i') => flags.case_insensitive = on,
                Some('u') => flags.unicode_case = on,
                Some('s') => flags.dot_all = on,
                Some('d') => flags.unix_lines = on,
                Some('x') => flags.comments = on,
                Some('m') => flags.multiline = on,
                Some('U') if on => return Err(self.unsupported("Unicode character classes ((?U))")),
                Some('U') => {}
                Some(')') => {
                    self.flags = flags;
                    return Ok(());
                }
                Some(':') => {
                    self.groups.push(self.flags);
                    self.flags = flags;
                    self.out.push_str("(?:");
                    return Ok(());
                }
                _ => return Err(self.invalid("an unknown inline flag")),
            }
        }
    }

    /// Java's `$` (or `\Z`): the end of the text, or before a line terminator that ends it.
    /// Written as the crate's end of text, the text being matched a second time without
    /// its final terminator; sound only where nothing of the pattern can follow it.
    fn end_before_terminator(&mut self, dollar: bool) -> Result<()> {
        if dollar && self.flags.multiline {
            return Err(self.unsupported("a multi-line anchor ((?m) with ^ or $)"));
        }
        let terminators = if self.flags.unix_lines { LineTerminators::Unix } else { LineTerminators::Java };
        if self.dollar.is_some_and(|before| before != terminators) {
            return Err(self.unsupported("$ both with and without (?d)"));
        }
        if !nothing_follows(&self.chars, self.at, self.flags) {
            return Err(self.unsupported("a $ or \\Z that more of the pattern follows"));
        }
        self.dollar = Some(terminators);
        self.out.push_str(r"\z");
        Ok(())
    }
}

/// Whether nothing that consumes text can follow position `at` of `chars`: only group ends
/// (and their quantifiers), other alternatives and more `$`.
fn nothing_follows(chars: &[char], mut at: usize, flags: Flags) -> bool {
    loop {
        at = skip_comments(chars, at, flags);
        match chars.get(at) {
            None => return true,
            Some('$') => at += 1,
            Some(')') => {
                at += 1;
                match chars.get(at) {
                    Some('*' | '+' | '?') => at += 1,
                    Some('{') => at += chars[at..].iter().position(|&c| c == '}').map_or(1, |end| end + 1),
                    _ => continue,
                }
                if matches!(chars.get(at), Some('?' | '+')) {
                    at += 1;
                }
            }
            // Another alternative: skip to the end of the group.
            Some('|') => at = group_end(chars, at + 1),
            Some(_) => return false,
        }
    }
}

/// The position of the `)` that closes the group `at` is in (or the end).
fn group_end(chars: &[char], mut at: usize) -> usize {
    let (mut depth, mut class_depth) = (0usize, 0usize);
    while let Some(&c) = chars.get(at) {
        match c {
            '\\' => at += 1,
            '[' => class_depth += 1,
            ']' if class_depth > 0 => class_depth -= 1,
            '(' if class_depth == 0 => depth += 1,
            ')' if class_depth == 0 && depth == 0 => return at,
            ')' if class_depth == 0 => depth -= 1,
            _ => {}
        }
        at += 1;
    }
    chars.len()
}

/// `at` past whitespace and `#` comments when `flags` has comments mode.
fn skip_comments(chars: &[char], mut at: usize, flags: Flags) -> usize {
    if !flags.comments {
        return at;
    }
    while let Some(&c) = chars.get(at) {
        if matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r') {
            at += 1;
        } else if c == '#' {
            let terminator = |c: &char| match flags.unix_lines {
                true => *c == '\n',
                false => matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'),
            };
            at += chars[at..].iter().position(terminator).map_or(chars.len() - at, |end| end + 1);
        } else {
            break;
        }
    }
    at
}

/// A character the crate reads as itself, inside a class or out. ASCII punctuation is
/// escaped: `:` too, as the crate reads `[:alpha:]` as a POSIX class, Java as five
/// characters.
fn push_literal(out: &mut String, c: char) {
    match c {
        c if c.is_ascii_punctuation() => {
            out.push('\\');
            out.push(c);
        }
        c if c.is_control() || c.is_whitespace() => out.push_str(&format!(r"\x{{{:X}}}", c as u32)),
        c => out.push(c),
    }
}

/// How a Java property name reads in the crate.
enum Property {
    /// A class's items (`a-z`), for Java's ASCII POSIX classes.
    Items(&'static str),
    /// A crate property name (`Lu`, `sc=Greek`).
    Crate(String),
}

enum PropertyProblem {
    /// A name Java does not know (an error in Java too).
    Unknown,
    /// A name Java knows that the crate cannot read as Java does.
    Unsupported(&'static str),
}

/// The general categories Java names (`\p{Lu}`, `\p{L}`), read alike by the crate.
const CATEGORIES: &[&str] = &[
    "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Me", "Mc", "Nd", "Nl", "No", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cs",
    "Pd", "Ps", "Pe", "Pc", "Po", "Sm", "Sc", "Sk", "So", "Pi", "Pf", "L", "M", "N", "Z", "C", "P", "S", "LC",
];

/// Java's `\p{name}` (`java.util.regex.Pattern`: POSIX names, general categories, `Is`
/// with a binary property, category or script, `sc=`/`gc=`), under `flags`.
fn java_property(name: &str, flags: Flags) -> std::result::Result<Property, PropertyProblem> {
    use Property::*;
    // Under (?i) Java folds the case classes in ways of its own (and by version).
    let case_class = |name: &str| {
        matches!(
            name.to_ascii_uppercase().as_str(),
            "LU" | "LL" | "LT" | "LC" | "LOWERCASE" | "UPPERCASE" | "TITLECASE" | "LOWER" | "UPPER"
        )
    };
    if let Some(value) = name.strip_prefix("sc=").or_else(|| name.strip_prefix("script=")) {
        return Ok(Crate(format!("sc={value}")));
    }
    if let Some(value) = name.strip_prefix("gc=").or_else(|| name.strip_prefix("general_category=")) {
        return match CATEGORIES.contains(&value) {
            true if flags.case_insensitive && case_class(value) => {
                Err(PropertyProblem::Unsupported("a case class under (?i)"))
            }
            true => Ok(Crate(value.to_string())),
            false => Err(PropertyProblem::Unknown),
        };
    }
    if name.starts_with("In") || name.starts_with("block=") || name.starts_with("blk=") {
        return Err(PropertyProblem::Unsupported("a Unicode block"));
    }
    if name.starts_with("java") {
        return Err(PropertyProblem::Unsupported("a java.lang.Character class"));
    }
    if let Some(short) = name.strip_prefix("Is") {
        if flags.case_insensitive && case_class(short) {
            return Err(PropertyProblem::Unsupported("a case class under (?i)"));
        }
        // Binary properties (and the POSIX names, here Unicode), any case.
        let binary = match short.to_ascii_uppercase().as_str() {
            "ALPHABETIC" | "ALPHA" => Some("Alphabetic"),
            "IDEOGRAPHIC" => Some("Ideographic"),
            "LETTER" => Some("L"),
            "LOWERCASE" | "LOWER" => Some("Lowercase"),
            "UPPERCASE" | "UPPER" => Some("Uppercase"),
            "TITLECASE" => Some("Lt"),
            "PUNCTUATION" | "PUNCT" => Some("P"),
            "CONTROL" | "CNTRL" => Some("Cc"),
            "WHITESPACE" | "WHITE_SPACE" | "SPACE" => Some("White_Space"),
            "DIGIT" => Some("Nd"),
            "HEXDIGIT" | "HEX_DIGIT" => Some("Hex_Digit"),
            "JOINCONTROL" | "JOIN_CONTROL" => Some("Join_Control"),
            "NONCHARACTERCODEPOINT" | "NONCHARACTER_CODE_POINT" => Some("Noncharacter_Code_Point"),
            _ => None,
        };
        return Ok(match binary {
            Some(property) => Crate(property.to_string()),
            None if CATEGORIES.contains(&short) => Crate(short.to_string()),
            None => Crate(format!("sc={short}")),
        });
    }
    // The POSIX names are ASCII (case-sensitive); `Lower` and `Upper` take both cases under (?i).
    let fold = flags.case_insensitive;
    Ok(Items(match name {
        "Lower" if fold && flags.unicode_case => return Err(PropertyProblem::Unsupported("a case class under (?iu)")),
        "Upper" if fold && flags.unicode_case => return Err(PropertyProblem::Unsupported("a case class under (?iu)")),
        "Lower" | "Upper" if fold => "A-Za-z",
        "Lower" => "a-z",
        "Upper" => "A-Z",
        "ASCII" => r"\x00-\x7F",
        "Alpha" => "A-Za-z",
        "Digit" => "0-9",
        "Alnum" => "0-9A-Za-z",
        "Punct" => r"!-/:-@\[-`{-~",
        "Graph" => "!-~",
        "Print" => r"\x20-~",
        "Blank" => r"\x20\t",
        "Cntrl" => r"\x00-\x1F\x7F",
        "XDigit" => "0-9A-Fa-f",
        "Space" => SPACE,
        "LD" => r"\p{L}\p{Nd}",
        "L1" => r"\x00-\xFF",
        "all" => r"\x00-\x{10FFFF}",
        category if CATEGORIES.contains(&category) => {
            if fold && case_class(category) {
                return Err(PropertyProblem::Unsupported("a case class under (?i)"));
            }
            return Ok(Crate(category.to_string()));
        }
        _ => return Err(PropertyProblem::Unknown),
    }))
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

    /// Each case was checked against Spark 4 (Java 17): the texts the pattern matches among
    /// `texts`, by index.
    fn matching(pattern: &str, texts: &[&str]) -> Vec<usize> {
        let regex = JavaRegex::new(pattern).unwrap();
        (0..texts.len()).filter(|&at| regex.is_match(texts[at])).collect()
    }

    #[test]
    fn case_insensitive_folds_ascii_letters_only_unless_unicode_case() {
        let texts = ["é", "É", "k", "K", "\u{212A}", "s", "S", "\u{17F}", "ω", "Ω"];
        assert_eq!(matching("(?i)é", &texts), [0]);
        assert_eq!(matching("(?i)k", &texts), [2, 3]);
        assert_eq!(matching("(?i)[k]", &texts), [2, 3]);
        assert_eq!(matching("(?i)[K-L]", &texts), [2, 3]);
        assert_eq!(matching(r"(?i)\x{4B}", &texts), [2, 3]);
        assert_eq!(matching("(?i)s", &texts), [5, 6]);
        assert_eq!(matching("(?i)ω", &texts), [8]);
        assert_eq!(matching("(?i)[^a-z]", &texts), [0, 1, 4, 7, 8, 9]);
        assert_eq!(matching(r"(?i)^\p{Lower}$", &texts), [2, 3, 5, 6]);
        assert_eq!(matching("(?iu)é", &texts), [0, 1]);
        assert_eq!(matching("(?iu)^i$", &["i", "I", "\u{130}", "\u{131}", "j"]), [0, 1, 2, 3]);
        assert_eq!(matching("(?i:S)x|(?-i)k", &["sx", "K", "k"]), [0, 2]);
        assert_eq!(matching(r"(?i)\Qa.B\E", &["A.b", "axb"]), [0]);
    }

    #[test]
    fn dot_all_and_unix_lines_change_the_dot() {
        let texts = ["a\nb", "a\rb", "a_b", "a\u{2028}b"];
        assert_eq!(matching("a.b", &texts), [2]);
        assert_eq!(matching("(?s)a.b", &texts), [0, 1, 2, 3]);
        assert_eq!(matching("(?d)a.b", &texts), [1, 2, 3]);
        assert_eq!(matching("(?s:a.)b|x", &texts), [0, 1, 2, 3]);
    }

    #[test]
    fn dollar_matches_before_a_final_line_terminator() {
        let texts = ["line\n", "line", "line\r\n", "line\n\n", "line\u{2028}", "x\r\n"];
        assert_eq!(matching("line$", &texts), [0, 1, 2, 4]);
        assert_eq!(matching(r"line\Z", &texts), [0, 1, 2, 4]);
        assert_eq!(matching(r"line\z", &texts), [1]);
        assert_eq!(matching("(?d)line$", &texts), [0, 1]);
        assert_eq!(matching("^(line|x)$", &texts), [0, 1, 2, 4, 5]);
        assert_eq!(matching("(e$|q)", &texts), [0, 1, 2, 4]);
        // Not between \r and \n.
        assert_eq!(matching("\r$", &texts), Vec::<usize>::new());
        assert_eq!(matching("^$", &["", "\n", "\n\n"]), [0, 1]);
        for pattern in ["a$b", "(a$)b", "a$|b$c", r"a$\z", "(?m)a$", "(?m)^a"] {
            assert!(JavaRegex::new(pattern).is_err(), "{pattern}");
        }
    }

    #[test]
    fn posix_classes_are_ascii_and_java_escapes_are_read() {
        let texts = ["é", "a", "٢", "2", "\u{A0}", "\t", "\u{85}", "\u{1B}", ":", "\u{2028}"];
        assert_eq!(matching(r"\p{Alpha}", &texts), [1]);
        assert_eq!(matching(r"\p{Lower}", &texts), [1]);
        assert_eq!(matching(r"\p{Digit}", &texts), [3]);
        assert_eq!(matching(r"\p{IsDigit}", &texts), [2, 3]);
        assert_eq!(matching(r"\p{IsAlphabetic}", &texts), [0, 1]);
        assert_eq!(matching(r"\P{Alnum}", &texts), [0, 2, 4, 5, 6, 7, 8, 9]);
        assert_eq!(matching(r"\p{Space}", &texts), [5]);
        assert_eq!(matching(r"\p{Cntrl}", &texts), [5, 7]);
        assert_eq!(matching(r"\h", &texts), [4, 5]);
        assert_eq!(matching(r"\v", &texts), [6, 9]);
        assert_eq!(matching(r"\e", &texts), [7]);
        assert_eq!(matching(r"\0101|\cA", &["A", "\u{1}", "a"]), [0, 1]);
        // A single `&` is a character, in a negated class too.
        assert_eq!(matching("[^&]", &["&", "a&"]), [1]);
        assert_eq!(matching("[a&]", &["&", "b"]), [0]);
        // A nested class in Java, a POSIX class in the crate.
        assert_eq!(matching("[[:alpha:]]", &["b", ":", "l"]), [1, 2]);
        assert_eq!(matching("(?x) a b # comment\n c", &["abc", "a b c"]), [0]);
        for pattern in [
            r"\p{Latin}",
            r"\p{Alphabetic}",
            r"\p{lower}",
            r"\p{InGreek}",
            r"\p{javaLowerCase}",
            "(?U)a",
            r"\X",
            r"\R",
            "(?iu)[a-z]",
            "[^a[b]]",
            "[^a&&b]",
        ] {
            assert!(JavaRegex::new(pattern).is_err(), "{pattern}");
        }
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
