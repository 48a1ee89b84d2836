//! The figures a note may not type by hand: counts, ratios and seeds of runs, which the next
//! publication could contradict. A note says them through placeholders the renderer fills
//! from the cell's runs, or names seeds as data; figures about the mechanism ("a 1-5 ms
//! hold", "500 ms each way", "token 4 written after 37", "2 of the 5 keys") stay text.
//!
//! What is refused, over the words of the text (a run of digits, a run of letters, or one
//! other character; case ignored; "N" a whole number in digits, "W" one in digits or a word
//! from zero to twenty):
//! - a ratio `N/N` (`3/3`, `0 / 10`);
//! - a count of a total `N of N` or `N in N` (`2 of 10`, `1 in 3`);
//! - a count of runs of a total `W run(s)|seed(s) of|in W` (`one run in three`, `0 runs of 3`);
//! - a seed by number `seed(s) N` (`seed 2`, `seeds 1-3`);
//! - a number of runs `N run(s)|seed(s)`, `N-run(s)|seed(s)` (`3 runs`, `a 10-seed run`);
//! - a verdict with a count `unsafe|safe|stuck|valid|invalid N` (`UNSAFE 2`, `safe 0`).

/// Number words that count runs as well as digits do ("one run in three").
const NUMBER_WORDS: [&str; 21] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

/// What a note may say instead, for the refusal's message.
pub const FIGURES_ALLOWED: &str = "a count, ratio or seed of runs must be data: write a placeholder the renderer fills from the cell's runs ({cell}, {runs}, {counted}, {invalid}, {valid}, {stuck}, {not-exposed}, {seeds:invalid}, {cell:ROW}, ...), or name the seed as `{seed N}` with N listed under `seeds.<verdict>`; figures that are not about runs (\"1-5 ms\", \"500 ms\", \"2 of the 5 keys\") are fine";

/// The first run figure typed by hand in `text` (a literal part of a note), as it reads.
pub fn run_figure(text: &str) -> Option<String> {
    let words = words(text);
    (0..words.len()).find_map(|i| {
        let len = figure_at(&words[i..])?;
        Some(words[i..i + len].concat().trim_start().to_owned())
    })
}

/// The words of the text, each with a space in front when whitespace came before it (so a
/// figure is quoted as written).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut chars = text.chars().peekable();
    let mut space = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        let mut word = String::new();
        if space && !out.is_empty() {
            word.push(' ');
        }
        space = false;
        word.push(c);
        let same = |a: char, b: char| {
            (a.is_ascii_digit() && b.is_ascii_digit()) || (a.is_alphabetic() && b.is_alphabetic())
        };
        while let Some(&n) = chars.peek() {
            if !same(c, n) {
                break;
            }
            word.push(n);
            chars.next();
        }
        out.push(word);
    }
    out
}

/// How many words a refused figure at the start of `w` spans, if one starts there.
fn figure_at(w: &[String]) -> Option<usize> {
    let at = |i: usize| w.get(i).map(|s| s.trim_start().to_lowercase());
    let digits = |i: usize| at(i).is_some_and(|s| s.chars().all(|c| c.is_ascii_digit()));
    let number = |i: usize| digits(i) || at(i).is_some_and(|s| NUMBER_WORDS.contains(&&*s));
    let is = |i: usize, any: &[&str]| at(i).is_some_and(|s| any.contains(&&*s));
    const RUNS: &[&str] = &["run", "runs", "seed", "seeds"];
    const OF: &[&str] = &["of", "in"];
    const VERDICTS: &[&str] = &["unsafe", "safe", "stuck", "valid", "invalid"];
    if digits(0) && is(1, &["/"]) && digits(2) {
        return Some(3);
    }
    if digits(0) && is(1, OF) && digits(2) {
        return Some(3);
    }
    if number(0) && is(1, RUNS) && is(2, OF) && number(3) {
        return Some(4);
    }
    if is(0, &["seed", "seeds"]) && digits(1) {
        return Some(2);
    }
    if digits(0) && is(1, RUNS) {
        return Some(2);
    }
    if digits(0) && is(1, &["-"]) && is(2, RUNS) {
        return Some(3);
    }
    if is(0, VERDICTS) && digits(1) {
        return Some(2);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_figures_are_refused_and_mechanism_figures_are_not() {
        let refused = [
            ("2 runs of 3 valid", "2 runs of 3"),
            ("the cell says UNSAFE 10/10", "UNSAFE 10"),
            ("valid 3 / 3 since then", "valid 3"),
            ("it was 3/3", "3/3"),
            ("UNSAFE 1 of 10 in the run", "UNSAFE 1"),
            ("found 1 of 3 earlier", "1 of 3"),
            ("One run in three showed it", "One run in three"),
            ("0 runs of 3 (seeds 1-3) caught it", "0 runs of 3"),
            ("in seeds 2 and 3", "seeds 2"),
            ("Seed 4: process 3 granted", "Seed 4"),
            ("in the 10-seed run of November", "10-seed"),
            ("(2 of 5 deleted)", "2 of 5"),
            ("lease 1, fenced 1 of 10", "1 of 10"),
        ];
        for (text, figure) in refused {
            assert_eq!(run_figure(text).as_deref(), Some(figure), "{text}");
        }
        let allowed = [
            "inside the holder's 1-5 ms hold",
            "500 ms each way made the holder look idle for over the 1 s timeout",
            "token 4 written at 0.291 s, then tokens 1, 2, 3 granted at 1.06-1.11 s",
            "2 of the 5 keys deleted; one of five masters",
            "node-redlock #296, #299; issue 18; commit 164ee32",
            "a lease of 920 = 988 - 68 ms, 2026-11-26",
            "the safe case; seeds are drawn per run",
        ];
        for text in allowed {
            assert_eq!(run_figure(text), None, "{text}");
        }
    }
}
