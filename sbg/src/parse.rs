//! The parser: the formal grammar of the paper's Figure 1, with `//` and
//! `/* */` comments anywhere between tokens, checked into [`Rules`].
//!
//! The older informal variant (`chess.sbg`) differs in four ways, each accepted
//! with a [`Warning`]: a byte-order mark, a bare name line instead of
//! `<<name>>`, board rows without `|...|`, and a doubled `&&` after a piece
//! rule. In that variant (recognised by the bare name line) `#X n` counts
//! captures, as its tools did: the player loses once `n` of its `X` pieces have
//! been captured, read here as "at most `initial - n` left" (also warned).
//!
//! Errors name the place (`line:col`, both from 1, columns in characters) and
//! the reason. Limits keep any input bounded: sides up to [`MAX_SIDE`],
//! expressions nested at most [`MAX_NESTING`] deep and at most
//! [`MAX_EXPANDED`] letters once powers are written out, turn limit at most
//! [`MAX_TURN_LIMIT`].

use crate::rules::{CountGoal, Letter, On, Piece, Player, ReachGoal, Regex, Rules, MAX_SIDE};
use std::fmt;

/// The deepest nesting of parentheses in an expression.
pub const MAX_NESTING: usize = 64;
/// The most letters an expression may have once every `^n` is written out.
pub const MAX_EXPANDED: u64 = 1024;
/// The largest turn limit.
pub const MAX_TURN_LIMIT: u32 = 10_000;

/// Why a text is not a game: where, and the reason.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
    /// The reason.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Something accepted that the formal grammar does not allow.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Warning {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
    /// What was accepted, and how it was read.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: warning: {}", self.line, self.col, self.message)
    }
}

/// A parsed game and the warnings it gave.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The game.
    pub rules: Rules,
    /// Deviations from the formal grammar that were accepted.
    pub warnings: Vec<Warning>,
}

/// Parses and checks an SBG game.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        col: 1,
        warnings: Vec::new(),
    };
    p.game()
}

/// A goal as written, resolved once the board is known.
enum RawGoal {
    Reach(ReachGoal),
    Count {
        player: Player,
        kind: u8,
        n: u32,
        at: (usize, usize),
    },
}

/// A cursor over the text, with the position of the next character and
/// the warnings so far.
struct Parser {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    col: usize,
    warnings: Vec<Warning>,
}

impl Parser {
    /// The next character.
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// The character `ahead` places after the next.
    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// Consumes the next character, keeping line and column: a line ends at
    /// `\n`, `\r\n` or a lone `\r`.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        let after_cr = self.pos > 0 && self.chars[self.pos - 1] == '\r';
        self.pos += 1;
        match c {
            '\n' if after_cr => {}
            '\n' | '\r' => {
                self.line += 1;
                self.col = 1;
            }
            _ => self.col += 1,
        }
        Some(c)
    }

    /// Whether the next character ends a line.
    fn at_line_end(&self) -> bool {
        matches!(self.peek(), Some('\n' | '\r'))
    }

    /// The position of the next character.
    fn here(&self) -> (usize, usize) {
        (self.line, self.col)
    }

    /// An error at `(line, col)`.
    fn error_at<T>(&self, (line, col): (usize, usize), message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            line,
            col,
            message: message.into(),
        })
    }

    /// An error at the next character.
    fn error<T>(&self, message: impl Into<String>) -> Result<T, ParseError> {
        self.error_at(self.here(), message)
    }

    /// Records a warning at `(line, col)`.
    fn warn_at(&mut self, (line, col): (usize, usize), message: impl Into<String>) {
        self.warnings.push(Warning {
            line,
            col,
            message: message.into(),
        });
    }

    /// What the next character is, for messages.
    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the file".to_owned(),
            Some(_) if self.at_line_end() => "the end of the line".to_owned(),
            Some(c) => format!("'{}'", c.escape_debug()),
        }
    }

    /// Skips white space and comments; an unterminated `/*` is an error at its start.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while self.peek().is_some() && !self.at_line_end() {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.here();
                    self.bump();
                    self.bump();
                    loop {
                        match (self.peek(), self.peek_at(1)) {
                            (None, _) => return self.error_at(start, "comment '/*' is never closed by '*/'"),
                            (Some('*'), Some('/')) => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            _ => {
                                self.bump();
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Whether the text goes on with `word`.
    fn looking_at(&self, word: &str) -> bool {
        word.chars().enumerate().all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// Skips trivia, then requires `word`.
    fn expect(&mut self, word: &str, what: &str) -> Result<(), ParseError> {
        self.skip_trivia()?;
        if !self.looking_at(word) {
            return self.error(format!("expected {what}, found {}", self.found()));
        }
        for _ in word.chars() {
            self.bump();
        }
        Ok(())
    }

    /// Skips trivia, then reads a natural number (digits) that fits in `u32`.
    fn nat(&mut self, what: &str) -> Result<(u32, (usize, usize)), ParseError> {
        self.skip_trivia()?;
        let at = self.here();
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return self.error(format!(
                "expected {what} (a natural number), found {}",
                self.found()
            ));
        }
        let mut value: u32 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            value = match value.checked_mul(10).and_then(|v| v.checked_add(d)) {
                Some(v) => v,
                None => return self.error_at(at, format!("{what} is too large")),
            };
            self.bump();
        }
        Ok((value, at))
    }

    /// Skips trivia, then reads an optionally negative integer.
    fn int(&mut self, what: &str) -> Result<i32, ParseError> {
        self.skip_trivia()?;
        let negative = self.peek() == Some('-');
        if negative {
            self.bump();
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return self.error(format!(
                    "expected digits after '-' in {what}, found {}",
                    self.found()
                ));
            }
        }
        let (n, at) = self.nat(what)?;
        let n = i32::try_from(n).or_else(|_| self.error_at(at, format!("{what} is too large")))?;
        Ok(if negative { -n } else { n })
    }

    /// The whole file.
    fn game(&mut self) -> Result<Parsed, ParseError> {
        if self.peek() == Some('\u{feff}') {
            self.pos += 1;
            self.warn_at((1, 1), "byte-order mark ignored (older variant)");
        }
        let (name, legacy) = self.name()?;
        self.expect("<BOARD>", "'<BOARD>'")?;
        let (width, height, board) = self.board()?;
        self.expect("<PIECES>", "'<PIECES>'")?;
        let moves = self.pieces(width, height)?;
        self.expect("<GOALS>", "'<GOALS>'")?;
        let (turn_limit, at) = self.nat("the turn limit")?;
        if turn_limit > MAX_TURN_LIMIT {
            return self.error_at(
                at,
                format!("turn limit {turn_limit} is larger than {MAX_TURN_LIMIT}"),
            );
        }
        self.expect("&", "'&' after the turn limit")?;
        let mut rules = Rules {
            name,
            width,
            height,
            board,
            moves,
            turn_limit,
            reach: Vec::new(),
            count: Vec::new(),
        };
        let mut warned_counts = false;
        while let Some(goal) = self.goal(width, height)? {
            match goal {
                RawGoal::Reach(goal) => rules.reach.push(goal),
                RawGoal::Count { player, kind, n, at } if legacy => {
                    if !warned_counts {
                        warned_counts = true;
                        self.warn_at(at, "'#' read as the older variant's capture count: the player loses once that many of its pieces of the type are captured");
                    }
                    match rules.initial_count(player, kind).checked_sub(n) {
                        Some(at_most) => rules.count.push(CountGoal {
                            player,
                            kind,
                            at_most,
                        }),
                        None => self.warn_at(at, "goal ignored: more captures than there are such pieces"),
                    }
                }
                RawGoal::Count { player, kind, n, .. } => rules.count.push(CountGoal {
                    player,
                    kind,
                    at_most: n,
                }),
            }
        }
        Ok(Parsed {
            rules,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    /// `<<name>>`, or (older variant) the first line; returns whether it was the latter.
    fn name(&mut self) -> Result<(String, bool), ParseError> {
        self.skip_trivia()?;
        let start = self.here();
        let mut name = String::new();
        let legacy = !self.looking_at("<<");
        if legacy {
            if self.looking_at("<BOARD>") || self.peek().is_none() {
                return self.error("expected the game's name '<<name>>'");
            }
            while let Some(c) = self.peek().filter(|_| !self.at_line_end()) {
                name.push(c);
                self.bump();
            }
            self.warn_at(
                start,
                "name without '<< >>' read from the first line (older variant)",
            );
        } else {
            self.bump();
            self.bump();
            loop {
                match self.peek() {
                    Some('>') if self.peek_at(1) == Some('>') => {
                        self.bump();
                        self.bump();
                        break;
                    }
                    None | Some('\n' | '\r') => {
                        return self.error_at(start, "'<<' is not closed by '>>' on its line")
                    }
                    Some(c) => {
                        name.push(c);
                        self.bump();
                    }
                }
            }
            if name.chars().any(|c| !(c.is_ascii_alphanumeric() || c == ' ')) {
                self.warn_at(start, "name has characters other than letters, digits and spaces");
            }
        }
        let name = name.trim().to_owned();
        if name.is_empty() {
            return self.error_at(start, "the game's name is empty");
        }
        Ok((name, legacy))
    }

    /// The board section after `<BOARD>`: sizes and rows, top row first.
    fn board(&mut self) -> Result<(usize, usize, Vec<Option<Piece>>), ParseError> {
        let (width, at) = self.nat("the board's width")?;
        let (height, at_h) = self.nat("the board's height")?;
        for (side, at, what) in [(width, at, "width"), (height, at_h, "height")] {
            if side == 0 || side as usize > MAX_SIDE {
                return self.error_at(at, format!("board {what} {side} is not in 1..={MAX_SIDE}"));
            }
        }
        let (width, height) = (width as usize, height as usize);
        let mut board = vec![None; width * height];
        let mut warned = false;
        for row in 0..height {
            self.skip_trivia()?;
            let start = self.here();
            let bars = self.peek() == Some('|');
            if bars {
                self.bump();
            } else if self.peek().is_some_and(|c| c == '.' || c.is_ascii_alphabetic()) {
                if !warned {
                    warned = true;
                    self.warn_at(start, "board rows without '|...|' (older variant)");
                }
            } else {
                return self.error(format!(
                    "expected row {} of {height} of the board, found {}",
                    row + 1,
                    self.found()
                ));
            }
            let mut squares = Vec::new();
            while let Some(c) = self.peek().filter(|c| *c == '.' || c.is_ascii_alphabetic()) {
                squares.push((c, self.here()));
                self.bump();
            }
            if bars {
                if self.peek() != Some('|') {
                    return self.error(format!(
                        "expected a square ('.' or a letter) or '|' closing the row, found {}",
                        self.found()
                    ));
                }
                self.bump();
            }
            if squares.len() != width {
                return self.error_at(
                    start,
                    format!(
                        "row {} has {} squares, the board is {width} wide",
                        row + 1,
                        squares.len()
                    ),
                );
            }
            let y = height - 1 - row;
            for (x, (c, _)) in squares.into_iter().enumerate() {
                board[y * width + x] = match c {
                    '.' => None,
                    c if c.is_ascii_uppercase() => Some(Piece {
                        owner: Player::White,
                        kind: c as u8,
                    }),
                    c => Some(Piece {
                        owner: Player::Black,
                        kind: c.to_ascii_uppercase() as u8,
                    }),
                };
            }
        }
        self.skip_trivia()?;
        if self
            .peek()
            .is_some_and(|c| c == '|' || c == '.' || c.is_ascii_alphabetic())
        {
            return self.error(format!("more rows than the board's height {height}"));
        }
        Ok((width, height, board))
    }

    /// The piece rules after `<PIECES>`, indexed by letter.
    fn pieces(&mut self, width: usize, height: usize) -> Result<Vec<Option<Regex>>, ParseError> {
        let mut moves: Vec<Option<Regex>> = vec![None; 26];
        loop {
            self.skip_trivia()?;
            let at = self.here();
            match self.peek() {
                Some(c) if c.is_ascii_uppercase() => {
                    self.bump();
                    let slot = usize::from(c as u8 - b'A');
                    if moves[slot].is_some() {
                        return self.error_at(at, format!("piece {c} has a second movement rule"));
                    }
                    let regex = self.alternation(width, height, 0)?;
                    if regex.expanded_len() > MAX_EXPANDED {
                        return self.error_at(at, format!("piece {c}'s rule has more than {MAX_EXPANDED} letters once powers are written out"));
                    }
                    self.expect("&", "'+', a '(' or '&' ending the rule")?;
                    self.skip_trivia()?;
                    if self.peek() == Some('&') {
                        let at = self.here();
                        self.bump();
                        self.warn_at(at, "'&&' read as '&' (older variant)");
                    }
                    moves[slot] = Some(regex);
                }
                Some(c) if c.is_ascii_lowercase() => {
                    return self.error(format!(
                        "piece rules are declared for white's (upper-case) letters: '{c}'"
                    ));
                }
                Some('<') => return Ok(moves),
                _ => {
                    return self.error(format!(
                        "expected a piece letter (A-Z) or '<GOALS>', found {}",
                        self.found()
                    ))
                }
            }
        }
    }

    /// `concat ('+' concat)*`
    fn alternation(&mut self, width: usize, height: usize, depth: usize) -> Result<Regex, ParseError> {
        let mut parts = vec![self.concatenation(width, height, depth)?];
        loop {
            self.skip_trivia()?;
            if self.peek() != Some('+') {
                break;
            }
            self.bump();
            parts.push(self.concatenation(width, height, depth)?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Regex::Alt(parts)
        })
    }

    /// `atom atom*`, each atom starting with '('.
    fn concatenation(&mut self, width: usize, height: usize, depth: usize) -> Result<Regex, ParseError> {
        let mut parts = Vec::new();
        loop {
            self.skip_trivia()?;
            if self.peek() != Some('(') {
                break;
            }
            parts.push(self.atom(width, height, depth)?);
        }
        match parts.len() {
            0 => self.error(format!(
                "expected '(' starting a letter or a group, found {}",
                self.found()
            )),
            1 => Ok(parts.remove(0)),
            _ => Ok(Regex::Concat(parts)),
        }
    }

    /// `'(' int ',' int ',' on ')' [power]` or `'(' regexp ')' [power]`.
    fn atom(&mut self, width: usize, height: usize, depth: usize) -> Result<Regex, ParseError> {
        if depth >= MAX_NESTING {
            return self.error(format!("expression nested more than {MAX_NESTING} deep"));
        }
        let open = self.here();
        self.bump(); // '('
        self.skip_trivia()?;
        let inner = if self.peek().is_some_and(|c| c == '-' || c.is_ascii_digit()) {
            let dx = self.int("dx")?;
            self.expect(",", "',' after dx")?;
            let dy = self.int("dy")?;
            self.expect(",", "',' after dy")?;
            self.skip_trivia()?;
            let on = match self.peek() {
                Some('e') => On::Empty,
                Some('p') => On::Opponent,
                Some('w') => On::Own,
                _ => return self.error(format!("expected 'e', 'p' or 'w', found {}", self.found())),
            };
            self.bump();
            self.expect(")", "')' closing the letter")?;
            if dx.unsigned_abs() as usize >= width || dy.unsigned_abs() as usize >= height {
                return self.error_at(
                    open,
                    format!(
                        "letter ({dx},{dy},{}) steps off any {width}x{height} board",
                        on.symbol()
                    ),
                );
            }
            Regex::Letter(Letter { dx, dy, on })
        } else {
            let inner = self.alternation(width, height, depth + 1)?;
            self.expect(")", "'+', '(' or ')' closing the group")?;
            inner
        };
        self.skip_trivia()?;
        if self.peek() != Some('^') {
            return Ok(inner);
        }
        self.bump();
        self.skip_trivia()?;
        if self.peek() == Some('*') {
            self.bump();
            return Ok(Regex::Star(Box::new(inner)));
        }
        let (n, _) = self.nat("the power after '^' (or '*')")?;
        Ok(Regex::Power(Box::new(inner), n))
    }

    /// One goal up to its '&', or `None` at the end of the file.
    fn goal(&mut self, width: usize, height: usize) -> Result<Option<RawGoal>, ParseError> {
        self.skip_trivia()?;
        let at = self.here();
        let marker = match self.peek() {
            None => return Ok(None),
            Some(c @ ('@' | '#')) => c,
            Some(_) => {
                return self.error(format!(
                    "expected a goal ('@' or '#') or the end of the file, found {}",
                    self.found()
                ))
            }
        };
        self.bump();
        let (player, kind) = match self.peek() {
            Some(c) if c.is_ascii_alphabetic() => {
                self.bump();
                let player = if c.is_ascii_uppercase() {
                    Player::White
                } else {
                    Player::Black
                };
                (player, c.to_ascii_uppercase() as u8)
            }
            _ => {
                return self.error(format!(
                    "expected a piece letter after '{marker}', found {}",
                    self.found()
                ))
            }
        };
        let goal = if marker == '@' {
            let mut squares = Vec::new();
            loop {
                let (x, at_x) = self.nat("a square's x")?;
                let (y, _) = self.nat("a square's y")?;
                if x as usize >= width || y as usize >= height {
                    return self.error_at(at_x, format!("square {x} {y} is off the {width}x{height} board"));
                }
                squares.push((x as usize, y as usize));
                self.skip_trivia()?;
                if self.peek() != Some(',') {
                    break;
                }
                self.bump();
            }
            RawGoal::Reach(ReachGoal {
                player,
                kind,
                squares,
            })
        } else {
            let (n, _) = self.nat("the piece count")?;
            RawGoal::Count { player, kind, n, at }
        };
        self.expect("&", "',' or '&' ending the goal")?;
        Ok(Some(goal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_small_game() {
        let text = "<<T>> <BOARD> 2 3 |k.| |..| |.K| <PIECES> K (0,1,e)^* + (1,0,p) & <GOALS> 10 & @K 0 2, 1 2 & #k 0 &";
        let parsed = parse(text).unwrap();
        let r = &parsed.rules;
        assert!(parsed.warnings.is_empty());
        assert_eq!((r.width(), r.height(), r.turn_limit()), (2, 3, 10));
        assert_eq!(
            r.initial_board()[1],
            Some(Piece {
                owner: Player::White,
                kind: b'K'
            })
        );
        assert_eq!(
            r.initial_board()[4],
            Some(Piece {
                owner: Player::Black,
                kind: b'K'
            })
        );
        assert_eq!(r.moves_of(b'K').unwrap().to_string(), "(0,1,e)^* + (1,0,p)");
        assert_eq!(r.reach_goals()[0].squares, vec![(0, 2), (1, 2)]);
        assert_eq!(
            r.count_goals()[0],
            CountGoal {
                player: Player::Black,
                kind: b'K',
                at_most: 0
            }
        );
    }
}
