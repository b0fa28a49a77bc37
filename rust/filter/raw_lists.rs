//! Long `IN` lists of plain literals lifted out of a filter's text before it is tokenized.
//!
//! A semi-join pushed into a scan arrives as `id IN (17, 4, 96, ...)` with a hundred
//! thousand numbers (or quoted keys); `sqlparser` tokenizes each number, string, comma and
//! space into a token with its own allocations, which costs more than reading the table.
//! Numbers, `NULL`, strings without quotes or backslashes inside, commas and spaces are a
//! lexically plain stretch of text, so such a list is read straight off the text and
//! replaced by a marker the tokenizer reads as one placeholder token.
//!
//! Whether the stretch really was a list in code (not inside a string, a comment or a
//! quoted name) is left to the tokenizer to tell: it tokenizes the text with the markers,
//! and each marker must come out as a placeholder token of its own, in order, between
//! `IN (` and `)`. A marker inside a string or a comment does not, and then the filter is
//! tokenized as written. The stretch holds no quote, comment opener or newline-ending
//! construct, so the text around it tokenizes alike with the marker or the list.
//!
//! ```text
//! a IN (3, -1, 7, ...) OR b = 'x'   →   a IN ($pqsift_raw_list0) OR b = 'x'
//!                                        lists[0] = [3, -1, 7, ...]
//! ```
//!
//! The tokens after a marker are moved back to their lines and columns in the text as
//! written, so that an error names the place the user wrote.

use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan};

use super::{Expr, Literal};

/// Stands in for a lifted list in the text: `$` and a name tokenize to one placeholder
/// token. Texts that contain the name are not lifted, so a marker is always one of ours.
const MARKER: &str = "$pqsift_raw_list";

/// A filter text with its long lists of plain literals lifted out.
pub(super) struct Lifted {
    /// The text, each lifted list's items replaced by [`MARKER`] and its number.
    pub text: String,
    /// The literals of each lifted list, by number.
    pub lists: Vec<Vec<Expr>>,
    /// Where each lifted list's items ended in the text as written.
    ends: Vec<ListEnd>,
}

/// The shape of a lifted list's text, which places its end: `newlines` in it, and
/// `last_line` characters after the last (all of them if there is none).
#[derive(Clone, Copy)]
struct ListEnd {
    newlines: u64,
    last_line: u64,
}

/// The text with each `IN (...)` list of at least `min_items` plain literals (see
/// [`literal_items`]) lifted out, or `None` where there is none to lift. `integer` types a
/// number from its digits, sign and suffix as the parser does; a number it rejects leaves
/// its list to the parser, which reports it.
pub(super) fn lift(
    sql: &str,
    min_items: usize,
    integer: impl Fn(&str, bool, bool) -> Option<Literal>,
) -> Option<Lifted> {
    if sql.contains(&MARKER[1..]) {
        return None;
    }
    let bytes = sql.as_bytes();
    let mut text = String::new();
    let mut lists = Vec::new();
    let mut ends = Vec::new();
    let mut copied = 0;
    let mut at = 0;
    // A candidate that fails is read again from the next `(`, which may lie inside it (a
    // string item holding `IN (`). Read from there, its strings are the first reading's
    // separators and its code the first reading's strings, which hold `IN (` wherever
    // another candidate starts: each reading ends by the next candidate, so the text is
    // read a bounded number of times over.
    while let Some(found) = bytes[at..].iter().position(|&b| b == b'(') {
        let open = at + found;
        at = open + 1;
        if !after_in(&sql[..open]) {
            continue;
        }
        let Some((items, close)) = literal_items(sql, open + 1, &integer) else { continue };
        if items.len() < min_items {
            continue;
        }
        let inside = &sql[open + 1..close];
        let newlines = inside.bytes().filter(|&b| b == b'\n').count() as u64;
        let last_line = inside.rsplit('\n').next().unwrap_or(inside).chars().count() as u64;
        text.push_str(&sql[copied..=open]);
        text.push_str(&format!("{MARKER}{}", lists.len()));
        ends.push(ListEnd { newlines, last_line });
        copied = close;
        at = close + 1;
        lists.push(items);
    }
    if lists.is_empty() {
        return None;
    }
    text.push_str(&sql[copied..]);
    Some(Lifted { text, lists, ends })
}

/// Whether `before` ends with the word `IN` (and spaces): a candidate, confirmed by the
/// tokens in [`place`].
fn after_in(before: &str) -> bool {
    let trimmed = before.trim_end_matches([' ', '\t', '\n', '\r']);
    let Some(head) = trimmed.len().checked_sub(2).and_then(|cut| trimmed.get(cut..).map(|word| (cut, word))) else {
        return false;
    };
    let (cut, word) = head;
    word.eq_ignore_ascii_case("in")
        && !trimmed[..cut].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The items of a list of plain literals whose text starts at `start` (after its `(`),
/// with the position of its `)`; `None` at anything else. Plain: integers (optionally
/// signed, optionally with the suffix `L`), `NULL`, and strings without a quote or a
/// backslash inside (whose text is their value, under any escaping rules).
fn literal_items(
    sql: &str,
    start: usize,
    integer: &impl Fn(&str, bool, bool) -> Option<Literal>,
) -> Option<(Vec<Expr>, usize)> {
    let bytes = sql.as_bytes();
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let skip_spaces = |at: usize| at + bytes[at..].iter().take_while(|b| is_space(b)).count();
    let mut items = Vec::new();
    let mut at = start;
    loop {
        at = skip_spaces(at);
        let (literal, end) = match bytes.get(at) {
            Some(b'\'') => {
                let length = bytes[at + 1..].iter().position(|&b| b == b'\'' || b == b'\\')?;
                if bytes[at + 1 + length] != b'\'' {
                    return None; // an escape: left to the tokenizer
                }
                (Literal::String(sql[at + 1..at + 1 + length].to_string()), at + length + 2)
            }
            Some(b'n' | b'N') if sql[at..].get(..4).is_some_and(|word| word.eq_ignore_ascii_case("null")) => {
                (Literal::Null, at + 4)
            }
            _ => {
                let negative = bytes.get(at) == Some(&b'-');
                if matches!(bytes.get(at), Some(b'-' | b'+')) {
                    at = skip_spaces(at + 1);
                }
                let digits = bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 {
                    return None;
                }
                // Spark's BIGINT suffix, as pqsift's own expressions write large values.
                let long = matches!(bytes.get(at + digits), Some(b'L' | b'l'));
                (integer(&sql[at..at + digits], negative, long)?, at + digits + usize::from(long))
            }
        };
        items.push(Expr::Literal(literal));
        // What follows a literal must end it: `'a''b'`, `'a' 'b'`, `1e5` and `NULLS` are
        // not lists of plain literals.
        at = skip_spaces(end);
        match bytes.get(at) {
            Some(b',') => at += 1,
            Some(b')') => return Some((items, at)),
            _ => return None,
        }
    }
}

/// `tokens` (of [`Lifted::text`]) with each marker replaced by `placeholder(number)` and
/// placed where the text as written has the list, or `None` unless every marker is a
/// token of its own, in order, right inside `IN (` and `)`: then the text is to be
/// tokenized as written.
pub(super) fn place(
    mut tokens: Vec<TokenWithSpan>,
    lifted: &Lifted,
    placeholder: impl Fn(usize) -> String,
) -> Option<Vec<TokenWithSpan>> {
    let mut placed = 0;
    let mut moved = Moved::default();
    for position in 0..tokens.len() {
        let span = tokens[position].span;
        let Token::Placeholder(name) = &tokens[position].token else {
            tokens[position].span = Span::new(moved.location(span.start), moved.location(span.end));
            continue;
        };
        let Some(number) = name.strip_prefix(MARKER) else { continue };
        if number != placed.to_string() {
            return None;
        }
        let mut before = tokens[..position].iter().rev();
        let open = next_code(&mut before);
        let word = next_code(&mut before);
        let close = next_code(tokens[position + 1..].iter());
        let is_in = word.as_ref().is_some_and(super::is_in_keyword);
        if open != Some(Token::LParen) || !is_in || close != Some(Token::RParen) {
            return None;
        }
        // The list's end, from the marker's: the marker's width replaced by the list's
        // (whatever column the tokenizer gives as a span's end).
        let start = moved.location(span.start);
        let list = lifted.ends[placed];
        let past_text = span.end.column as i64 - span.start.column as i64 - name.chars().count() as i64;
        let (line, first_column) = match list.newlines {
            0 => (start.line, start.column),
            lines => (start.line + lines, 1),
        };
        let end = Location::new(line, (first_column + list.last_line).saturating_add_signed(past_text));
        moved = Moved {
            lifted_line: span.end.line,
            lines: end.line.saturating_sub(span.end.line),
            columns: end.column as i64 - span.end.column as i64,
        };
        tokens[position] = TokenWithSpan::new(Token::Placeholder(placeholder(placed)), Span::new(start, end));
        placed += 1;
    }
    (placed == lifted.lists.len()).then_some(tokens)
}

/// How far the tokens after the last marker move back to their places in the text as
/// written: `lines` down, and on the marker's own line (`lifted_line`) `columns` over.
#[derive(Default)]
struct Moved {
    lifted_line: u64,
    lines: u64,
    columns: i64,
}

impl Moved {
    fn location(&self, at: Location) -> Location {
        if at.line == 0 {
            return at; // an empty span's
        }
        let column =
            if at.line == self.lifted_line { at.column.saturating_add_signed(self.columns) } else { at.column };
        Location::new(at.line + self.lines, column)
    }
}

/// The next token that is not whitespace.
fn next_code<'a>(mut tokens: impl Iterator<Item = &'a TokenWithSpan>) -> Option<Token> {
    tokens.find(|t| !matches!(t.token, Token::Whitespace(_))).map(|t| t.token.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(text: &str, negative: bool, _long: bool) -> Option<Literal> {
        let value: i64 = text.parse().ok()?;
        Some(Literal::Long(if negative { -value } else { value }))
    }

    #[test]
    fn lifts_long_integer_lists_keeping_what_follows_in_place() {
        let sql = "a IN (1, -2, + 3,\n 4, 'ü\n', null, 7, 8, 9) AND b in(5, 6, 7, 8, 10, 11, 12) AND c IN (9)";
        let lifted = lift(sql, 4, int).unwrap();
        assert_eq!(lifted.lists.len(), 2);
        assert_eq!(lifted.lists[0][1], Expr::Literal(Literal::Long(-2)));
        assert_eq!(lifted.lists[0][4..6], [Expr::Literal(Literal::String("ü\n".into())), Expr::Literal(Literal::Null)]);
        assert_eq!(lifted.lists[1].len(), 7);
        assert_eq!(lifted.text, "a IN ($pqsift_raw_list0) AND b in($pqsift_raw_list1) AND c IN (9)");
    }

    /// Strings that hold `IN (` start candidate lists inside a list, read with the quotes
    /// the other way round (`', '` a string, `,` a comma): none is lifted, only the list
    /// in code.
    #[test]
    fn candidates_inside_strings_are_not_lifted() {
        let numbers = (0..20).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        let items = ["'IN ('", "','", "','", "','"].repeat(20).join(", ");
        let lifted = lift(&format!("a IN ({items}, b) OR c IN ({numbers})"), 4, int).unwrap();
        assert_eq!(lifted.text, format!("a IN ({items}, b) OR c IN ($pqsift_raw_list0)"));
    }

    #[test]
    fn leaves_what_is_not_a_list_of_plain_literals() {
        for sql in [
            "a IN ('p', 'q', 'r''s', 't')",
            "a IN ('p', 'q', 'r\\'s', 't')",
            "a IN ('p', 'q', 'r' 's', 't')",
            "a IN ('p', 'q', 'r', X'00')",
            "a IN ('p', 'q', 'r', -'s')",
            "a IN (1, 2, 3, NULLS)",
            "a IN (1, 2, 3, 4LL)",
            "a IN (1, 2, 3, 4 L)",
            "a IN (1, 2, 3, 4Y)",
            "a IN (1, 2, 3, 4.5)",
            "a IN (1, 2, 3, --4\n)",
            "a IN (1, 2, 3, 4e1)",
            "a IN (1, 2, 3, b)",
            "xin (1, 2, 3, 4)",
            "f(1, 2, 3, 4)",
            "a IN (1, 2, 3, 4) AND s = '$pqsift_raw_list'",
        ] {
            assert!(lift(sql, 4, int).is_none(), "{sql}");
        }
    }
}
