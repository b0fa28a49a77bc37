//! Parsing Spark SQL filter text into an [`Expr`] with the `sqlparser` crate.
//!
//! `sqlparser`'s Spark dialect is the base; two lexical rules are Spark's own and added
//! here: string literals take backslash escapes (`'it\'s'`; `\%` and `\_` stay as they are
//! for LIKE), and numeric literals take Spark's type suffixes (`1Y` TINYINT, `1S`
//! SMALLINT, `1L` BIGINT, `1.5F` FLOAT, `1.5D` DOUBLE, `1.5BD` DECIMAL), which the
//! tokenizer splits into a number and a word that are joined again before parsing.
//!
//! One deviation: Spark reads `'a''b'` as two adjacent literals concatenated (`ab`);
//! `sqlparser` reads it as the SQL-standard escaped quote (`a'b`).

use sqlparser::ast::{
    self, BinaryOperator, CastKind, CeilFloorKind, DataType, ExactNumberInfo, FunctionArg, FunctionArgExpr,
    FunctionArguments, ObjectNamePart, TimezoneInfo, UnaryOperator, Value,
};
use sqlparser::dialect::{Dialect, SparkSqlDialect};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use super::functions;
use super::recent::Recent;
#[path = "raw_lists.rs"]
mod raw_lists;
use super::spark_cast::{parse_date, parse_decimal_text, parse_timestamp_text};
use super::{ArithmeticOp, ColumnPath, CompareOp, Expr, Literal, SqlType};
use crate::{PqsiftError, Result};

/// Parses a Spark SQL boolean expression (what follows `WHERE`) into an [`Expr`].
///
/// Supported: column references (`a`, nested `a.b`, back-quoted `` `a.b` ``), literals,
/// comparisons (`= == != <> < <= > >= <=>`), `[NOT] IN`, `IS [NOT] NULL`,
/// `[NOT] BETWEEN`, `[NOT] LIKE [ESCAPE]`, `[NOT] ILIKE`, `[NOT] RLIKE`, `AND OR NOT`,
/// `CAST(x AS type)` (and `x::type`), `TRY_CAST(x AS type)`, `+ - * / %`, unary minus,
/// `CASE` and the functions of [`functions`](super::functions). Anything else is a
/// [`PqsiftError::Filter`] naming the token, as is text left over after the expression.
///
/// ```
/// use pqsift::filter::{parse_filter, Expr, Literal};
///
/// let expr = parse_filter("price * 2 >= 10.5 AND name LIKE 'a%'").unwrap();
/// assert_eq!(expr.to_string(), "`price` * 2 >= 10.5 AND `name` LIKE 'a%'");
/// assert_eq!(parse_filter("-128Y").unwrap(), Expr::Literal(Literal::Byte(-128)));
///
/// let error = parse_filter("foo(x) > 1").unwrap_err();
/// assert!(error.to_string().contains("unsupported function \"foo\""));
/// assert!(parse_filter("a > 1 b").is_err());
/// ```
pub fn parse_filter(sql: &str) -> Result<Expr> {
    if sql.len() < SHARED_PARSE_BYTES {
        return parse(sql, true);
    }
    shared_parse(sql)
}

/// Filter texts at least this long are parsed once and shared (see [`shared_parse`]).
const SHARED_PARSE_BYTES: usize = 4096;

/// How many recent long texts [`shared_parse`] keeps.
const SHARED_PARSES: usize = 4;

/// [`parse`] of a long filter (an `IN` list of thousands of values, slow to tokenize),
/// shared with the previous calls on the same text:
/// a scan parses its filter when made and its reader again, and every Spark task of a
/// query gets the same text. The copies share their lists ([`super::ExprList`]), so
/// binding them later finds the shared binding by pointer.
fn shared_parse(sql: &str) -> Result<Expr> {
    static RECENT: Recent<String, Expr> = Recent::new(SHARED_PARSES);
    RECENT.get_or_make(|text, _| text == sql, || sql.to_string(), || parse(sql, true))
}

/// [`parse_filter`]; `take_lists`: long literal lists skip `sqlparser` (always but in tests).
fn parse(sql: &str, take_lists: bool) -> Result<Expr> {
    let dialect = SparkFilterDialect;
    let lifted = if take_lists { tokens_with_raw_lists(sql) } else { None };
    let (tokens, lists) = match lifted {
        Some(lifted) => lifted,
        None => (
            Tokenizer::new(&dialect, sql).tokenize_with_location().map_err(|e| {
                PqsiftError::filter(format!("cannot parse filter {:?}: {e}", crate::error::quoted(sql)))
            })?,
            Vec::new(),
        ),
    };
    let tokens = join_numeric_suffixes(tokens);
    let (tokens, lists) = if take_lists { take_literal_lists(tokens, lists)? } else { (tokens, lists) };
    check_operator_count(sql, &tokens)?;
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    let parsed = parser.parse_expr().map_err(|e| parse_error(sql, e))?;
    let next = parser.peek_token();
    if next.token != Token::EOF {
        return Err(PqsiftError::filter(format!(
            "cannot parse filter {sql:?}: unexpected \"{}\" at {} after the expression",
            next.token, next.span.start
        )));
    }
    LITERAL_LISTS.with(|taken| *taken.borrow_mut() = lists);
    let converted = convert(&parsed);
    LITERAL_LISTS.with(|taken| taken.borrow_mut().clear());
    converted
}

/// The tokens of `sql` with its long lists of plain literals read off the text first
/// (see `raw_lists`), and those lists; `None` where there are none or the tokenizer does
/// not confirm them, for the text to be tokenized as written.
fn tokens_with_raw_lists(sql: &str) -> Option<(Vec<TokenWithSpan>, Vec<Vec<Expr>>)> {
    let lifted = raw_lists::lift(sql, LITERAL_LIST_MIN, plain_integer)?;
    let tokens = Tokenizer::new(&SparkFilterDialect, &lifted.text).tokenize_with_location().ok()?;
    let placed = raw_lists::place(tokens, &lifted, |n| format!("{LIST_PLACEHOLDER}{n}"))?;
    Some((placed, lifted.lists))
}

/// An `IN` list of at least this many plain literals is taken out of the tokens before
/// `sqlparser` parses them (see [`take_literal_lists`]).
const LITERAL_LIST_MIN: usize = 16;

/// Marks the place of a list [`take_literal_lists`] took: a placeholder no text tokenizes
/// to (a NUL after the `$`), followed by the list's number.
const LIST_PLACEHOLDER: &str = "$\0pqsift_list";

thread_local! {
    /// The lists [`take_literal_lists`] took, by number, while [`parse_filter`] converts.
    static LITERAL_LISTS: std::cell::RefCell<Vec<Vec<Expr>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Takes each `IN (...)` list of [`LITERAL_LIST_MIN`] or more plain literals (numbers,
/// optionally signed, quoted strings, `NULL`) out of `tokens`, leaving a placeholder, and
/// converts its literals directly. `sqlparser` parses every list item as a full expression,
/// trying a typed literal (`DATE '...'`) first, with several allocations per item; a long
/// `IN` list of numbers is the most common shape of a semi-join pushed
/// into a scan. Lists with anything else (a column, an expression, a typed literal) are
/// left to the parser whole.
///
/// `lists`: those taken before (numbered first).
fn take_literal_lists(
    tokens: Vec<TokenWithSpan>,
    mut lists: Vec<Vec<Expr>>,
) -> Result<(Vec<TokenWithSpan>, Vec<Vec<Expr>>)> {
    if !tokens.iter().any(|token| is_in_keyword(&token.token)) {
        return Ok((tokens, lists));
    }
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut position = 0;
    while position < tokens.len() {
        let token = &tokens[position];
        out.push(token.clone());
        position += 1;
        if !is_in_keyword(&token.token) {
            continue;
        }
        let Some((literals, open, end)) = literal_list(&tokens, position)? else { continue };
        if literals.len() < LITERAL_LIST_MIN {
            continue;
        }
        out.push(tokens[open].clone());
        let placeholder = Token::Placeholder(format!("{LIST_PLACEHOLDER}{}", lists.len()));
        out.push(TokenWithSpan::new(placeholder, tokens[open + 1].span.union(&tokens[end - 1].span)));
        out.push(tokens[end].clone());
        lists.push(literals);
        position = end + 1;
    }
    Ok((out, lists))
}

/// Whether `token` is the keyword `IN` (not a quoted name).
fn is_in_keyword(token: &Token) -> bool {
    matches!(token, Token::Word(word) if word.keyword == sqlparser::keywords::Keyword::IN && word.quote_style.is_none())
}

/// The literals of the list that opens at or after `start` (whitespace first), with the
/// positions of its `(` and `)`; None when it is not a list of plain literals.
fn literal_list(tokens: &[TokenWithSpan], start: usize) -> Result<Option<(Vec<Expr>, usize, usize)>> {
    let skip_space = |mut at: usize| {
        while matches!(tokens.get(at).map(|t| &t.token), Some(Token::Whitespace(_))) {
            at += 1;
        }
        at
    };
    let open = skip_space(start);
    if !matches!(tokens.get(open).map(|t| &t.token), Some(Token::LParen)) {
        return Ok(None);
    }
    let mut literals = Vec::new();
    let mut at = open + 1;
    loop {
        at = skip_space(at);
        let sign = tokens.get(at).map(|t| &t.token);
        let negative = matches!(sign, Some(Token::Minus));
        if matches!(sign, Some(Token::Minus | Token::Plus)) {
            at = skip_space(at + 1);
        }
        let literal = match tokens.get(at).map(|t| &t.token) {
            Some(Token::Number(text, long)) => convert_value(&Value::Number(text.clone(), *long), negative)?,
            Some(Token::SingleQuotedString(text)) if !negative => Literal::String(text.clone()),
            Some(Token::Word(word))
                if !negative && word.quote_style.is_none() && word.value.eq_ignore_ascii_case("NULL") =>
            {
                Literal::Null
            }
            _ => return Ok(None),
        };
        literals.push(Expr::Literal(literal));
        at = skip_space(at + 1);
        match tokens.get(at).map(|t| &t.token) {
            Some(Token::Comma) => at += 1,
            Some(Token::RParen) => return Ok(Some((literals, open, at))),
            _ => return Ok(None),
        }
    }
}

/// A plain integer's literal (`long`: written with the suffix `L`), typed as
/// [`numeric_literal`] types it (INT, else BIGINT, else DECIMAL; BIGINT with the suffix):
/// the common case without its allocations. `None` where it is an error.
fn plain_integer(digits: &str, negative: bool, long: bool) -> Option<Literal> {
    if digits.len() <= 18 {
        let magnitude: i64 = digits.parse().ok()?;
        let value = if negative { -magnitude } else { magnitude };
        return Some(match i32::try_from(value) {
            Ok(int) if !long => Literal::Int(int),
            _ => Literal::Long(value),
        });
    }
    numeric_literal(&format!("{digits}{}", if long { "L" } else { "" }), negative).ok()
}

/// The literals of a list [`take_literal_lists`] took, when `list` is its placeholder.
fn taken_list(list: &[ast::Expr]) -> Option<Vec<Expr>> {
    let [ast::Expr::Value(ast::ValueWithSpan { value: Value::Placeholder(name), .. })] = list else { return None };
    let number: usize = name.strip_prefix(LIST_PLACEHOLDER)?.parse().ok()?;
    LITERAL_LISTS.with(|taken| taken.borrow_mut().get_mut(number).map(std::mem::take))
}

/// The most operators a filter may have. A chain `a OR b OR ...` nests one level per
/// operator, and parsing, binding, pruning and evaluation recurse on that nesting: the limit
/// bounds the depth (the recursive steps also grow the stack when it runs low, see the
/// `recursive` crate). A long list of alternatives belongs in `IN (...)`, which is flat.
pub(crate) const MAX_OPERATORS: usize = 1_000;

fn check_operator_count(sql: &str, tokens: &[TokenWithSpan]) -> Result<()> {
    use sqlparser::keywords::Keyword;
    let operators = tokens
        .iter()
        .filter(|token| match &token.token {
            Token::Eq
            | Token::DoubleEq
            | Token::Neq
            | Token::Lt
            | Token::Gt
            | Token::LtEq
            | Token::GtEq
            | Token::Spaceship
            | Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::Mod
            | Token::ExclamationMark
            | Token::DoubleColon => true,
            Token::Word(word) => matches!(
                word.keyword,
                Keyword::AND | Keyword::OR | Keyword::NOT | Keyword::IS | Keyword::LIKE | Keyword::BETWEEN
            ),
            _ => false,
        })
        .count();
    if operators > MAX_OPERATORS {
        return Err(PqsiftError::filter(format!(
            "filter {:?}... has too many operators ({operators}, at most {MAX_OPERATORS}); \
             write a long list of alternatives as IN (...)",
            sql.chars().take(60).collect::<String>()
        )));
    }
    Ok(())
}

fn parse_error(sql: &str, error: ParserError) -> PqsiftError {
    let detail = match error {
        ParserError::RecursionLimitExceeded => "expression nested too deeply".to_string(),
        ParserError::ParserError(message) | ParserError::TokenizerError(message) => message,
    };
    PqsiftError::filter(format!("cannot parse filter {:?}: {detail}", crate::error::quoted(sql)))
}

/// `sqlparser`'s Spark dialect plus Spark's string escapes (see the module docs).
#[derive(Debug)]
struct SparkFilterDialect;

impl Dialect for SparkFilterDialect {
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        SparkSqlDialect.is_delimited_identifier_start(ch)
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        SparkSqlDialect.identifier_quote_style(identifier)
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        SparkSqlDialect.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        SparkSqlDialect.is_identifier_part(ch)
    }
    fn supports_string_literal_backslash_escape(&self) -> bool {
        true
    }
    // Spark keeps `\%` and `\_` in the string so that LIKE sees the escape.
    fn ignores_wildcard_escapes(&self) -> bool {
        true
    }
    fn supports_bang_not_operator(&self) -> bool {
        true
    }
    fn supports_long_type_as_bigint(&self) -> bool {
        true
    }
    fn require_interval_qualifier(&self) -> bool {
        true
    }
}

/// Spark's numeric literal suffixes, upper case.
const NUMERIC_SUFFIXES: [&str; 6] = ["Y", "S", "L", "F", "D", "BD"];

/// Joins a number and a suffix word written right after it (`1` `BD` → `1BD`) into one
/// number token.
fn join_numeric_suffixes(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut joined: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    for token in tokens {
        if let (Some(previous), Token::Word(word)) = (joined.last_mut(), &token.token)
            && let Token::Number(number, long) = &mut previous.token
        {
            let suffix = word.value.to_ascii_uppercase();
            if !*long && word.quote_style.is_none() && NUMERIC_SUFFIXES.contains(&suffix.as_str()) {
                number.push_str(&suffix);
                previous.span = previous.span.union(&token.span);
                continue;
            }
        }
        joined.push(token);
    }
    for token in &mut joined {
        if let Token::Number(number, long @ true) = &mut token.token {
            number.push('L');
            *long = false;
        }
    }
    joined
}

fn unsupported(what: &str, text: impl std::fmt::Display) -> PqsiftError {
    PqsiftError::filter(format!("unsupported {what} \"{text}\" in filter"))
}

fn boxed(expr: &ast::Expr) -> Result<Box<Expr>> {
    convert(expr).map(Box::new)
}

/// Converts a `sqlparser` expression, rejecting everything outside the supported set.
#[recursive::recursive]
fn convert(expr: &ast::Expr) -> Result<Expr> {
    Ok(match expr {
        ast::Expr::Identifier(ident) => Expr::Column(ColumnPath::new([ident.value.clone()])),
        ast::Expr::CompoundIdentifier(idents) => Expr::Column(ColumnPath::new(idents.iter().map(|i| i.value.clone()))),
        ast::Expr::Nested(inner) => convert(inner)?,
        ast::Expr::Value(value) => Expr::Literal(convert_value(&value.value, false)?),
        // `TIMESTAMP_NTZ '...'` is the local date-time the text says: a cast of the text.
        ast::Expr::TypedString(typed) if matches!(typed.data_type, DataType::TimestampNtz(None)) => {
            let ast::ValueWithSpan { value: Value::SingleQuotedString(text), .. } = &typed.value else {
                return Err(unsupported("literal", &typed.value.value));
            };
            if parse_timestamp_text(text).is_none() {
                return Err(PqsiftError::filter(format!("invalid TIMESTAMP_NTZ literal '{text}'")));
            }
            Expr::Cast { expr: Box::new(Expr::Literal(Literal::String(text.clone()))), to: SqlType::TimestampNtz }
        }
        ast::Expr::TypedString(typed) => Expr::Literal(convert_typed_string(typed)?),
        ast::Expr::UnaryOp { op, expr: operand } => match op {
            UnaryOperator::Not | UnaryOperator::BangNot => Expr::Not(boxed(operand)?),
            UnaryOperator::Plus => convert(operand)?,
            UnaryOperator::Minus => match operand.as_ref() {
                // `-5` is one literal, so that `-128Y` and `-2147483648` fit their types.
                ast::Expr::Value(value) if matches!(value.value, Value::Number(..)) => {
                    Expr::Literal(convert_value(&value.value, true)?)
                }
                _ => Expr::Negate(boxed(operand)?),
            },
            other => return Err(unsupported("operator", other)),
        },
        ast::Expr::BinaryOp { left, op, right } => convert_binary(left, op, right)?,
        ast::Expr::IsNull(inner) => Expr::IsNull { expr: boxed(inner)?, negated: false },
        ast::Expr::IsNotNull(inner) => Expr::IsNull { expr: boxed(inner)?, negated: true },
        ast::Expr::IsNotDistinctFrom(left, right) => {
            Expr::Compare { op: CompareOp::NullSafeEq, left: boxed(left)?, right: boxed(right)? }
        }
        ast::Expr::IsDistinctFrom(left, right) => {
            Expr::Not(Box::new(Expr::Compare { op: CompareOp::NullSafeEq, left: boxed(left)?, right: boxed(right)? }))
        }
        ast::Expr::InList { expr: tested, list, negated } => {
            if list.is_empty() {
                return Err(PqsiftError::filter(format!("empty IN list after \"{tested}\" in filter")));
            }
            let list = match taken_list(list) {
                Some(literals) => literals.into(),
                None => list.iter().map(convert).collect::<Result<_>>()?,
            };
            Expr::InList { expr: boxed(tested)?, list, negated: *negated }
        }
        ast::Expr::Between { expr: tested, negated, low, high } => {
            Expr::Between { expr: boxed(tested)?, low: boxed(low)?, high: boxed(high)?, negated: *negated }
        }
        ast::Expr::Like { negated, any, expr: tested, pattern, escape_char } => {
            if *any {
                return Err(unsupported("operator", "LIKE ANY"));
            }
            Expr::Like {
                expr: boxed(tested)?,
                pattern: string_literal(pattern, "LIKE pattern")?,
                escape: match escape_char {
                    None => None,
                    Some(escape) => Some(escape_character(escape)?),
                },
                negated: *negated,
            }
        }
        ast::Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon, expr: operand, data_type, format: None } => {
            convert_cast(operand, data_type)?
        }
        ast::Expr::Cast { kind: CastKind::TryCast, expr: operand, data_type, format: None } => {
            Expr::TryCast { expr: boxed(operand)?, to: sql_type(data_type)? }
        }
        ast::Expr::Function(function) => convert_function(function)?,
        // Spark's `ILike` is `lower(s) LIKE lower(pattern)`.
        ast::Expr::ILike { negated, any, expr: tested, pattern, escape_char } => {
            if *any {
                return Err(unsupported("operator", "ILIKE ANY"));
            }
            Expr::Like {
                expr: Box::new(Expr::Function { name: "lower".to_string(), args: vec![convert(tested)?] }),
                pattern: super::function_kernels::spark_lower(&string_literal(pattern, "ILIKE pattern")?),
                escape: escape_char.as_deref().map(escape_character).transpose()?,
                negated: *negated,
            }
        }
        ast::Expr::RLike { negated, expr: tested, pattern, .. } => {
            let matched = Expr::Function { name: "rlike".to_string(), args: vec![convert(tested)?, convert(pattern)?] };
            if *negated { Expr::Not(Box::new(matched)) } else { matched }
        }
        ast::Expr::Case { operand, conditions, else_result, .. } => {
            convert_case(operand.as_deref(), conditions, else_result.as_deref())?
        }
        ast::Expr::Trim { trim_where, trim_what, expr: trimmed, trim_characters } => {
            convert_trim(trim_where.as_ref(), trim_what.as_deref(), trimmed, trim_characters.as_ref())?
        }
        ast::Expr::Substring { expr: whole, substring_from, substring_for, .. } => {
            let Some(from) = substring_from else {
                return Err(PqsiftError::filter(format!("substring takes 2 to 3 argument(s), got 1 in \"{expr}\"")));
            };
            let mut args = vec![convert(whole)?, convert(from)?];
            if let Some(length) = substring_for {
                args.push(convert(length)?);
            }
            Expr::Function { name: "substring".to_string(), args }
        }
        ast::Expr::Ceil { expr: operand, field: CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) } => {
            Expr::Function { name: "ceil".to_string(), args: vec![convert(operand)?] }
        }
        ast::Expr::Floor { expr: operand, field: CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) } => {
            Expr::Function { name: "floor".to_string(), args: vec![convert(operand)?] }
        }
        other => return Err(unsupported("expression", other)),
    })
}

fn convert_binary(left: &ast::Expr, op: &BinaryOperator, right: &ast::Expr) -> Result<Expr> {
    let compare = |op| -> Result<Expr> { Ok(Expr::Compare { op, left: boxed(left)?, right: boxed(right)? }) };
    let arithmetic = |op| -> Result<Expr> { Ok(Expr::Arithmetic { op, left: boxed(left)?, right: boxed(right)? }) };
    match op {
        BinaryOperator::Eq => compare(CompareOp::Eq),
        BinaryOperator::NotEq => compare(CompareOp::NotEq),
        BinaryOperator::Lt => compare(CompareOp::Lt),
        BinaryOperator::LtEq => compare(CompareOp::LtEq),
        BinaryOperator::Gt => compare(CompareOp::Gt),
        BinaryOperator::GtEq => compare(CompareOp::GtEq),
        BinaryOperator::Spaceship => compare(CompareOp::NullSafeEq),
        BinaryOperator::Plus => arithmetic(ArithmeticOp::Add),
        BinaryOperator::Minus => arithmetic(ArithmeticOp::Subtract),
        BinaryOperator::Multiply => arithmetic(ArithmeticOp::Multiply),
        BinaryOperator::Divide => arithmetic(ArithmeticOp::Divide),
        BinaryOperator::Modulo => {
            Ok(Expr::Function { name: "mod".to_string(), args: vec![convert(left)?, convert(right)?] })
        }
        BinaryOperator::And => Ok(Expr::And(boxed(left)?, boxed(right)?)),
        BinaryOperator::Or => Ok(Expr::Or(boxed(left)?, boxed(right)?)),
        other => Err(unsupported("operator", other)),
    }
}

/// A string literal operand (LIKE pattern, ESCAPE character).
fn string_literal(expr: &ast::Expr, role: &str) -> Result<String> {
    match expr {
        ast::Expr::Value(value) => match &value.value {
            Value::SingleQuotedString(text) | Value::DoubleQuotedString(text) => Ok(text.clone()),
            other => Err(PqsiftError::filter(format!("{role} must be a string literal, got \"{other}\""))),
        },
        ast::Expr::Nested(inner) => string_literal(inner, role),
        other => Err(PqsiftError::filter(format!("{role} must be a string literal, got \"{other}\""))),
    }
}

fn escape_character(expr: &ast::Expr) -> Result<char> {
    let text = string_literal(expr, "LIKE ESCAPE")?;
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(PqsiftError::filter(format!("LIKE ESCAPE must be a single character, got '{text}'"))),
    }
}

fn convert_value(value: &Value, negative: bool) -> Result<Literal> {
    Ok(match value {
        Value::Number(text, long) => {
            let text = if *long { format!("{text}L") } else { text.clone() };
            numeric_literal(&text, negative)?
        }
        Value::SingleQuotedString(text) | Value::DoubleQuotedString(text) => Literal::String(text.clone()),
        Value::Boolean(value) => Literal::Boolean(*value),
        Value::Null => Literal::Null,
        Value::HexStringLiteral(hex) => Literal::Binary(decode_hex(hex)?),
        other => return Err(unsupported("literal", other)),
    })
}

fn decode_hex(hex: &str) -> Result<Vec<u8>> {
    let invalid = || PqsiftError::filter(format!("invalid binary literal X'{hex}'"));
    if !hex.len().is_multiple_of(2) {
        return Err(invalid());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).ok_or_else(invalid)?, 16).map_err(|_| invalid()))
        .collect()
}

/// Types a numeric literal by its text as Spark does: a suffix decides; otherwise an
/// exponent makes DOUBLE, a point DECIMAL, and an integer is INT, BIGINT or DECIMAL(n,0),
/// the first that holds it.
fn numeric_literal(text: &str, negative: bool) -> Result<Literal> {
    let shown = if negative { format!("-{text}") } else { text.to_string() };
    let out_of_range =
        |type_name: &str| PqsiftError::filter(format!("literal {shown} is out of range for {type_name}"));
    let invalid = || PqsiftError::filter(format!("invalid numeric literal {shown}"));
    let upper = text.to_ascii_uppercase();
    let (body, suffix) = match NUMERIC_SUFFIXES
        .iter()
        .rev() // "BD" before "D"
        .find(|suffix| upper.ends_with(*suffix))
    {
        Some(suffix) => (&text[..text.len() - suffix.len()], *suffix),
        None => (text, ""),
    };
    let is_integer = !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit());
    let signed_integer = || -> Option<i128> {
        let magnitude: i128 = body.parse().ok()?;
        Some(if negative { -magnitude } else { magnitude })
    };
    match suffix {
        "Y" | "S" | "L" => {
            if !is_integer {
                return Err(invalid());
            }
            let value = signed_integer();
            Ok(match suffix {
                "Y" => Literal::Byte(value.and_then(|v| v.try_into().ok()).ok_or_else(|| out_of_range("TINYINT"))?),
                "S" => Literal::Short(value.and_then(|v| v.try_into().ok()).ok_or_else(|| out_of_range("SMALLINT"))?),
                _ => Literal::Long(value.and_then(|v| v.try_into().ok()).ok_or_else(|| out_of_range("BIGINT"))?),
            })
        }
        "F" | "D" => {
            let magnitude: f64 = body.parse().map_err(|_| invalid())?;
            if !body.bytes().all(|b| b.is_ascii_digit() || b"eE.+-".contains(&b)) {
                return Err(invalid());
            }
            let signed = if negative { -magnitude } else { magnitude };
            if suffix == "F" {
                let single: f32 = body.parse().map_err(|_| invalid())?;
                if single.is_infinite() {
                    return Err(out_of_range("FLOAT"));
                }
                Ok(Literal::Float(if negative { -single } else { single }))
            } else if signed.is_infinite() {
                Err(out_of_range("DOUBLE"))
            } else {
                Ok(Literal::Double(signed))
            }
        }
        "BD" => decimal_literal(body, negative, &shown),
        _ if body.contains(['e', 'E']) => {
            let magnitude: f64 = body.parse().map_err(|_| invalid())?;
            if magnitude.is_infinite() {
                return Err(out_of_range("DOUBLE"));
            }
            Ok(Literal::Double(if negative { -magnitude } else { magnitude }))
        }
        _ if body.contains('.') => decimal_literal(body, negative, &shown),
        _ => {
            let value = signed_integer().ok_or_else(|| out_of_range("DECIMAL(38,0)"))?;
            if let Ok(int) = i32::try_from(value) {
                Ok(Literal::Int(int))
            } else if let Ok(long) = i64::try_from(value) {
                Ok(Literal::Long(long))
            } else {
                decimal_literal(body, negative, &shown)
            }
        }
    }
}

/// A DECIMAL literal with the scale its text shows (never negative: `1E3BD` is 1000).
fn decimal_literal(body: &str, negative: bool, shown: &str) -> Result<Literal> {
    let text =
        parse_decimal_text(body).ok_or_else(|| PqsiftError::filter(format!("invalid numeric literal {shown}")))?;
    let scale = (-text.exponent).max(0);
    let scale = i8::try_from(scale)
        .ok()
        .filter(|s| *s <= 38)
        .ok_or_else(|| PqsiftError::filter(format!("literal {shown} has more than 38 digits")))?;
    let unscaled = text
        .to_unscaled(38, scale)
        .map_err(|_| PqsiftError::filter(format!("literal {shown} has more than 38 digits")))?;
    Ok(Literal::Decimal { unscaled: if negative { -unscaled } else { unscaled }, scale })
}

fn convert_typed_string(typed: &ast::TypedString) -> Result<Literal> {
    let text = match &typed.value.value {
        Value::SingleQuotedString(text) | Value::DoubleQuotedString(text) => text.as_str(),
        other => return Err(unsupported("literal", other)),
    };
    match &typed.data_type {
        DataType::Date => parse_date(text)
            .map(Literal::Date)
            .ok_or_else(|| PqsiftError::filter(format!("invalid DATE literal '{text}'"))),
        DataType::Timestamp(None, TimezoneInfo::None) => parse_timestamp_text(text)
            .map(Literal::Timestamp)
            .ok_or_else(|| PqsiftError::filter(format!("invalid TIMESTAMP literal '{text}'"))),
        other => Err(unsupported("typed literal", format!("{other} '{text}'"))),
    }
}

fn convert_cast(operand: &ast::Expr, data_type: &DataType) -> Result<Expr> {
    let to = sql_type(data_type)?;
    // `CAST('NaN' AS DOUBLE)` is how Display writes non-finite floats: read it back as
    // the literal it stands for.
    if let ast::Expr::Value(value) = operand
        && let Value::SingleQuotedString(text) = &value.value
    {
        let special = match text.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        };
        match (special, to) {
            (Some(v), SqlType::Double) => return Ok(Expr::Literal(Literal::Double(v))),
            (Some(v), SqlType::Float) => return Ok(Expr::Literal(Literal::Float(v as f32))),
            _ => {}
        }
    }
    Ok(Expr::Cast { expr: boxed(operand)?, to })
}

/// The Spark type a CAST names.
fn sql_type(data_type: &DataType) -> Result<SqlType> {
    let decimal = |info: &ExactNumberInfo| -> Result<SqlType> {
        let (precision, scale) = match info {
            ExactNumberInfo::None => (10, 0),
            ExactNumberInfo::Precision(p) => (*p, 0),
            ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s),
        };
        if !(1..=38).contains(&precision) || scale < 0 || scale as u64 > precision {
            return Err(PqsiftError::filter(format!(
                "invalid type DECIMAL({precision},{scale}): precision must be 1..=38 and scale 0..=precision"
            )));
        }
        Ok(SqlType::Decimal { precision: precision as u8, scale: scale as i8 })
    };
    Ok(match data_type {
        DataType::Boolean | DataType::Bool => SqlType::Boolean,
        DataType::TinyInt(None) => SqlType::Byte,
        DataType::SmallInt(None) => SqlType::Short,
        DataType::Int(None) | DataType::Integer(None) => SqlType::Int,
        DataType::BigInt(None) => SqlType::Long,
        DataType::Float(ExactNumberInfo::None) | DataType::Real => SqlType::Float,
        DataType::Double(ExactNumberInfo::None) | DataType::DoublePrecision => SqlType::Double,
        DataType::Decimal(info) | DataType::Numeric(info) | DataType::Dec(info) => decimal(info)?,
        DataType::String(None) | DataType::Text => SqlType::String,
        DataType::Binary(None) => SqlType::Binary,
        DataType::Date => SqlType::Date,
        DataType::Timestamp(None, TimezoneInfo::None) => SqlType::Timestamp,
        DataType::TimestampNtz(None) => SqlType::TimestampNtz,
        DataType::Custom(name, modifiers) if modifiers.is_empty() => {
            match name.to_string().to_ascii_uppercase().as_str() {
                "BYTE" => SqlType::Byte,
                "SHORT" => SqlType::Short,
                "LONG" => SqlType::Long,
                "TIMESTAMP_LTZ" => SqlType::Timestamp,
                "TIMESTAMP_NTZ" => SqlType::TimestampNtz,
                _ => return Err(unsupported("type", data_type)),
            }
        }
        other => return Err(unsupported("type", other)),
    })
}

fn convert_function(function: &ast::Function) -> Result<Expr> {
    let written = match function.name.0.as_slice() {
        [ObjectNamePart::Identifier(ident)] => ident.value.clone(),
        _ => return Err(unsupported("function", &function.name)),
    };
    let Some((name, min_args, max_args)) = functions::lookup(&written) else {
        return Err(PqsiftError::filter(format!(
            "unsupported function \"{written}\" in filter; pqsift evaluates {}",
            functions::supported_names()
        )));
    };
    let plain_call = function.filter.is_none()
        && function.over.is_none()
        && function.within_group.is_empty()
        && function.null_treatment.is_none()
        && matches!(function.parameters, FunctionArguments::None);
    let args: Vec<Expr> = match &function.args {
        // `current_date` may be written without parentheses.
        FunctionArguments::None if plain_call => Vec::new(),
        FunctionArguments::List(list)
            if plain_call && list.duplicate_treatment.is_none() && list.clauses.is_empty() =>
        {
            list.args
                .iter()
                .map(|arg| match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)) => convert(arg),
                    other => Err(unsupported("argument", other)),
                })
                .collect::<Result<_>>()?
        }
        _ => return Err(unsupported("call", function)),
    };
    if args.len() < min_args || args.len() > max_args {
        let expected = match (min_args, max_args) {
            (a, b) if a == b => format!("{a}"),
            (a, usize::MAX) => format!("at least {a}"),
            (a, b) => format!("{a} to {b}"),
        };
        return Err(PqsiftError::filter(format!(
            "{name} takes {expected} argument(s), got {} in \"{function}\"",
            args.len()
        )));
    }
    function_call(name, args)
}

/// A call of a known function by its canonical name, with the rewrites Spark makes of some
/// (so that binding, evaluation and pruning see one form).
fn function_call(name: &str, args: Vec<Expr>) -> Result<Expr> {
    let mut args = args.into_iter();
    let mut next = || Box::new(args.next().expect("arity checked"));
    Ok(match name {
        "abs" => Expr::Abs(next()),
        // `date(x)` and `to_date(x)` are `CAST(x AS DATE)` in Spark.
        "date" => Expr::Cast { expr: next(), to: SqlType::Date },
        "isnull" => Expr::IsNull { expr: next(), negated: false },
        "isnotnull" => Expr::IsNull { expr: next(), negated: true },
        "if" => {
            let (condition, then, otherwise) = (next(), next(), next());
            Expr::Case { branches: vec![(*condition, *then)], otherwise: Some(otherwise) }
        }
        // Spark's `NullIf` is `if(a = b, NULL, a)`, `Nvl2` is `if(a IS NOT NULL, b, c)`.
        "nullif" => {
            let (left, right) = (next(), next());
            let equal = Expr::Compare { op: CompareOp::Eq, left: left.clone(), right };
            Expr::Case { branches: vec![(equal, Expr::Literal(Literal::Null))], otherwise: Some(left) }
        }
        "nvl2" => {
            let (tested, present, absent) = (next(), next(), next());
            let not_null = Expr::IsNull { expr: tested, negated: true };
            Expr::Case { branches: vec![(not_null, *present)], otherwise: Some(absent) }
        }
        _ => Expr::Function { name: name.to_string(), args: args.collect() },
    })
}

/// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`; with an operand, each `WHEN v` is the
/// condition `operand = v`.
fn convert_case(
    operand: Option<&ast::Expr>,
    conditions: &[ast::CaseWhen],
    else_result: Option<&ast::Expr>,
) -> Result<Expr> {
    let operand = operand.map(convert).transpose()?;
    let branches = conditions
        .iter()
        .map(|when| {
            let condition = convert(&when.condition)?;
            let condition = match &operand {
                Some(tested) => {
                    Expr::Compare { op: CompareOp::Eq, left: Box::new(tested.clone()), right: Box::new(condition) }
                }
                None => condition,
            };
            Ok((condition, convert(&when.result)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Expr::Case { branches, otherwise: else_result.map(boxed).transpose()? })
}

/// `TRIM([BOTH | LEADING | TRAILING] [chars FROM] s)` as `trim`, `ltrim` or `rtrim` of
/// `s` and, when given, the characters to remove.
fn convert_trim(
    trim_where: Option<&ast::TrimWhereField>,
    trim_what: Option<&ast::Expr>,
    expr: &ast::Expr,
    trim_characters: Option<&Vec<ast::Expr>>,
) -> Result<Expr> {
    let name = match trim_where {
        None | Some(ast::TrimWhereField::Both) => "trim",
        Some(ast::TrimWhereField::Leading) => "ltrim",
        Some(ast::TrimWhereField::Trailing) => "rtrim",
    };
    let mut args = vec![convert(expr)?];
    match (trim_what, trim_characters.map(Vec::as_slice)) {
        (Some(what), None) => args.push(convert(what)?),
        (None, None) => {}
        // `TRIM(s, chars)`: Spark reads the second argument as the characters to remove.
        (None, Some([chars])) => args.push(convert(chars)?),
        _ => return Err(unsupported("expression", "TRIM with several character lists")),
    }
    Ok(Expr::Function { name: name.to_string(), args })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long literal lists taken out of the tokens parse to what `sqlparser` makes of them.
    #[test]
    fn taken_literal_lists_parse_as_sqlparser_parses_them() {
        let numbers =
            (0..40).map(|i| format!("{}{i}", if i % 3 == 0 { "-" } else { "" })).collect::<Vec<_>>().join(", ");
        let mixed =
            "1, -2, + 3, 4L, 5Y, -128Y, 6.5, 7e3, 1.5BD, 2147483648, -9223372036854775808, NULL, null, 0, -0.0, 9, 10";
        let strings = (0..20).map(|i| format!("'s{i} it''s \\'q\\''")).collect::<Vec<_>>().join(",");
        for sql in [
            format!("a IN ({numbers})"),
            format!("a NOT IN ({numbers}) AND b IN ({strings}) OR c IN({mixed})"),
            format!("a IN ( {numbers} ) AND b IN (1, 2)"),
            // Not plain literals: left to the parser whole.
            format!("a IN ({numbers}, b)"),
            format!("a IN ({numbers}, DATE '2026-01-01')"),
            format!("a IN ({numbers}, 1 + 2)"),
            format!("a IN ({numbers}, -'x')"),
            format!("a IN ({numbers}, 5::int)"),
        ] {
            assert_eq!(parse(&sql, true).unwrap(), parse(&sql, false).unwrap(), "{sql}");
        }
        let out_of_range = format!("a IN ({numbers}, 128Y)");
        assert_eq!(
            parse(&out_of_range, true).unwrap_err().to_string(),
            parse(&out_of_range, false).unwrap_err().to_string()
        );
        // Signs in a long list are not operators: 2,000 negative numbers parse.
        let negatives = (0..2000).map(|i| format!("-{i}")).collect::<Vec<_>>().join(", ");
        let Expr::InList { list, .. } = parse_filter(&format!("a IN ({negatives})")).unwrap() else { panic!() };
        assert_eq!((list.len(), &list[5]), (2000, &Expr::Literal(Literal::Int(-5))));
        // A placeholder written in the text is not a taken list.
        assert!(parse_filter("a IN ($0pqsift_list0)").is_err());
    }

    /// Lists read off the raw text parse as the tokens of the text as written do, wherever
    /// the text puts them: in code, in strings, comments and quoted names, after a word
    /// that only ends in `in`, with their numbers at the edges of INT and BIGINT.
    #[test]
    fn raw_integer_lists_parse_as_the_text_as_written() {
        let edges = [
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "9223372036854775807",
            "-9223372036854775808L",
            "7L",
            "- 0l",
        ];
        let numbers = (0..30).map(|i| format!("{}{i}", ["", "-", "+ ", "- "][i % 4])).chain(edges.map(String::from));
        let list = numbers.collect::<Vec<_>>().join(", ");
        let lines = list.replace(", ", ",\n  ");
        let strings = ["'a'", "''", "'ü -- /* IN ('", "NULL", "' x '", "null", "'\n\t'", "'$'"].repeat(3).join(", ");
        for sql in [
            format!("a IN ({strings})"),
            format!("a IN ({strings}, {list}) AND b IN (\n{strings}\n)"),
            format!("a IN ({strings}, 'it''s') OR b IN ({strings}, 'it\\'s')"),
            format!("a IN ({list})"),
            format!("a NOT IN ({lines}) AND b IN({list}) OR c in (\n{list}\n)"),
            format!("a IN ({list}, 99999999999999999999)"),
            format!("s = 'x IN ({list})' OR a IN ({list})"),
            format!("s = 'it\\'s IN ({list})' AND a IN ({list})"),
            format!("`IN` IN ({list}) AND `x IN ({list})` = 1"),
            format!("a = 1 /* IN ({list}) */ OR a IN ({list})"),
            format!("a = 1 -- IN ({lines})\n OR a IN ({list})"),
            format!("a = 1 OR aIN ({list})"),
            format!("s = '$pqsift_raw_list0' OR a IN ({list})"),
        ] {
            assert_eq!(parse(&sql, true), parse(&sql, false), "{sql}");
        }
        // Read off the text where the list is in code, as written where it is not.
        let lifted = |sql: String| tokens_with_raw_lists(&sql).map(|(_, lists)| lists.len());
        assert_eq!(lifted(format!("a IN ({list}) OR c in (\n{lines}\n) OR d IN ({strings})")), Some(3));
        assert_eq!(lifted(format!("s = 'x IN ({list})'")), None);
        assert_eq!(lifted(format!("a = 1 -- IN ({lines})")), None);
        assert_eq!(lifted(format!("`x IN ({list})` = 1")), None);
        assert_eq!(lifted(format!("a IN ({list}, 1D)")), None);
        // Out of range: left to the parser, which says so.
        let too_long = format!("a IN ({list}, 9223372036854775808L)");
        assert_eq!(lifted(too_long.clone()), None);
        assert!(parse(&too_long, true).unwrap_err().to_string().contains("out of range for BIGINT"));
        // An error after a lifted list is placed where it is in the text as written.
        for sql in
            [format!("a IN ({lines}) AND b >"), format!("a IN ({list}) AND b > 1 c"), format!("a IN ({list}) AND")]
        {
            let (lifted, written) = (parse(&sql, true).unwrap_err(), parse(&sql, false).unwrap_err());
            assert_eq!(lifted.to_string(), written.to_string(), "{sql}");
        }
    }

    proptest::proptest! {
        /// Lists of any integers, signs, suffixes, strings and spacing, lifted or not,
        /// parse alike.
        #[test]
        fn raw_literal_lists_parse_alike(
            values in proptest::collection::vec(
                (proptest::num::i128::ANY, 0..3usize, 0..4usize, proptest::bool::ANY, proptest::option::of("[a-z'\\\\ü$(),\n-]{0,6}")),
                16..40,
            ),
            context in 0..4usize,
        ) {
            let spaces = ["", " ", "\n", " \t "];
            let items: Vec<String> = values
                .iter()
                .map(|(v, sign, space, long, text)| match text {
                    Some(text) => format!("'{text}'"),
                    None => {
                        let magnitude = (v % 10i128.pow(1 + (v.unsigned_abs() % 25) as u32)).unsigned_abs();
                        let suffix = if *long { "L" } else { "" };
                        format!("{}{}{magnitude}{suffix}", ["", "-", "+"][*sign], spaces[*space])
                    }
                })
                .collect();
            let list = items.join(&format!(",{}", spaces[context]));
            let sql = match context {
                0 => format!("a IN ({list})"),
                1 => format!("a IN ({list}) OR b IN ({list})"),
                2 => format!("s = 'IN ({list})' AND a NOT IN ({list})"),
                _ => format!("a IN ({list}) AND"),
            };
            // Equal results; an error either way (which one is reported first, an
            // out-of-range literal or the syntax, may differ).
            match (parse(&sql, true), parse(&sql, false)) {
                (Ok(lifted), Ok(written)) => proptest::prop_assert_eq!(lifted, written),
                (lifted, written) => proptest::prop_assert!(lifted.is_err() && written.is_err(), "{lifted:?} {written:?}"),
            }
        }
    }
}
