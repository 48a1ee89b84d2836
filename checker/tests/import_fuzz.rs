//! Fuzz loops (proptest, a bounded number of cases so CI spends seconds) over every history
//! importer and the format sniffing: arbitrary text, EDN-flavoured noise, deep nesting and
//! mutations of well-formed Jepsen logs, EDN histories and lockpick JSONL never panic or
//! overflow the stack; each gives a history (which every model then answers with a verdict or
//! a named error) or an error that names a line of the input.

use lockpick_checker::import::{parse_text, Format, ImportError};
use lockpick_checker::lin_search::Budget;
use lockpick_checker::linearizability::check_history;
use lockpick_checker::models::MODELS;
use proptest::prelude::*;
use std::time::Duration;

const FORMATS: [Option<Format>; 4] = [
    None,
    Some(Format::JepsenLog),
    Some(Format::JepsenEdn),
    Some(Format::Lockpick),
];

/// Well-formed inputs the mutations start from, one per importer and layout.
const SEEDS: &[&str] = &[
    "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t1\nINFO  jepsen.util - 1\t:invoke\t:cas\t[1 2]\nINFO  jepsen.util - 1\t:fail\t:cas\t[1 2]\nINFO  jepsen.util - 2\t:invoke\t:read\tnil\nINFO  jepsen.util - 2\t:ok\t:read\t1\n",
    "{:index 0, :time 10, :type :invoke, :process 0, :f :write, :value 1}\n{:index 1, :time 20, :type :ok, :process 0, :f :write, :value 1}\n{:index 2, :time 25, :type :info, :process :nemesis, :f :start, :value #{\"n1\"}}\n{:index 3, :time 30, :type :invoke, :process 1, :f :read, :value nil}\n{:index 4, :time 40, :type :ok, :process 1, :f :read, :value 1}\n",
    ";; vector\n[{:process 0,\n  :type :invoke, :f :append, :key \"k\", :value \"a\\u00e9\"}\n #_{:process 9}\n {:process 0, :type :ok, :f :append, :key \"k\", :value \"a\\u00e9\"}\n {:process 1, :type :invoke, :f :get, :key \"k\", :value nil}\n {:process 1, :type :ok, :f :get, :key \"k\", :value \"a\\u00e9\"}]\n",
    "#jepsen.history.Op{:index 0, :type :invoke, :process 0, :f :acquire, :value nil}\n#jepsen.history.Op{:index 1, :type :ok, :process 0, :f :acquire, :value 1}\n#jepsen.history.Op{:index 2, :type :invoke, :process 0, :f :release, :value nil}\n#jepsen.history.Op{:index 3, :type :ok, :process 0, :f :release, :value nil}\n",
    "{:process 0, :type :invoke, :f :write, :value [1 10]}\n{:process 0, :type :ok, :f :write, :value [1 10]}\n{:process 1, :type :invoke, :f :read, :value [2 nil]}\n{:process 1, :type :ok, :f :read, :value [2 nil]}\n",
    "{\"v\":1,\"index\":0,\"time_ns\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"lock\":\"l\",\"value\":{\"lease_ms\":500}}\n{\"v\":1,\"index\":1,\"time_ns\":10,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"lock\":\"l\",\"value\":{\"token\":1}}\n",
];

/// Characters that matter to the readers, plus some that do not.
const ALPHABET: &[char] = &[
    '[',
    ']',
    '(',
    ')',
    '{',
    '}',
    '#',
    '_',
    '^',
    ':',
    ';',
    '"',
    '\\',
    ',',
    ' ',
    '\n',
    '\t',
    'u',
    '0',
    '1',
    '9',
    '-',
    '+',
    '.',
    'e',
    'N',
    'M',
    '/',
    'a',
    'x',
    '\'',
    '`',
    '~',
    '@',
    '=',
    '\u{e9}',
    '\u{1F600}',
    '\0',
    'n',
    'i',
    'l',
    't',
    'r',
    'f',
    's',
    'o',
    'k',
    'p',
    'c',
];

/// Words the importers look for, so mutations reach past the first check.
const WORDS: &[&str] = &[
    ":process ",
    ":type ",
    ":invoke ",
    ":ok ",
    ":fail ",
    ":info ",
    ":f ",
    ":read ",
    ":write ",
    ":cas ",
    ":acquire ",
    ":value ",
    ":index ",
    ":time ",
    ":key ",
    "nil ",
    "#jepsen.history.Op",
    "#_",
    "#{",
    "#:ns{",
    "\\u",
    "\\newline",
    "99999999999999999999N ",
    "-1 ",
    "##NaN",
    " jepsen.util - ",
    "\"type\":\"ok\"",
    "{\"v\":1,",
];

/// Every importer and, when one reads the text, every model: nothing panics; an import error
/// names a line inside the text (or is the unknown-format error).
fn answers_cleanly(text: &str) {
    let lines = text.lines().count().max(1) + 1;
    let detected = Format::detect(text);
    let budget = Budget {
        time: Some(Duration::from_millis(20)),
        ..Budget::default()
    };
    for format in FORMATS {
        match parse_text(text, format) {
            Ok(history) => {
                for &model in MODELS {
                    // A verdict, or an error naming the operation it cannot take.
                    if let Err(e) = check_history(&history, model, &budget) {
                        assert!(!e.to_string().is_empty());
                        assert!(e.index < history.ops.len().max(1), "{e}");
                    }
                }
            }
            Err(ImportError::Parse { line, message, .. }) => {
                assert!(
                    line >= 1 && line <= lines,
                    "line {line} of {lines}: {message}"
                );
                assert!(!message.is_empty());
            }
            Err(ImportError::UnknownFormat) => {
                assert!(format.is_none() && detected.is_none(), "{format:?}");
            }
            Err(ImportError::Lockpick(e)) => assert!(!e.to_string().is_empty()),
            Err(ImportError::Io { .. } | ImportError::Utf8 { .. }) => {
                unreachable!("no file is read")
            }
        }
    }
    // Sniffing and naming the format it found read the text the same way.
    if let Some(f) = detected {
        assert_eq!(
            parse_text(text, None).is_ok(),
            parse_text(text, Some(f)).is_ok()
        );
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Insert(usize, char),
    InsertWord(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize),
    /// Opens `n` collections of one kind at a place: nesting past the reader's limit.
    Nest(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), prop::sample::select(ALPHABET)).prop_map(|(p, c)| Mutation::Insert(p, c)),
        3 => (any::<usize>(), 0..WORDS.len()).prop_map(|(p, w)| Mutation::InsertWord(p, w)),
        3 => (any::<usize>(), 1usize..40).prop_map(|(p, n)| Mutation::Delete(p, n)),
        1 => (any::<usize>(), 1usize..200).prop_map(|(p, n)| Mutation::Duplicate(p, n)),
        1 => (any::<usize>(), 0usize..6, 100usize..3000).prop_map(|(p, k, n)| Mutation::Nest(p, k, n)),
    ]
}

/// The char boundary at or before `p % (len + 1)`.
fn at(text: &str, p: usize) -> usize {
    let mut i = p % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &mut String, m: &Mutation) {
    match *m {
        Mutation::Insert(p, c) => {
            let i = at(text, p);
            text.insert(i, c);
        }
        Mutation::InsertWord(p, w) => {
            let i = at(text, p);
            text.insert_str(i, WORDS[w]);
        }
        Mutation::Delete(p, n) => {
            let i = at(text, p);
            let j = at(text, i + n.min(text.len() - i));
            text.replace_range(i..j.max(i), "");
        }
        Mutation::Duplicate(p, n) => {
            let i = at(text, p);
            let j = at(text, i + n.min(text.len() - i)).max(i);
            let piece = text[i..j].to_string();
            text.insert_str(j, &piece);
        }
        Mutation::Nest(p, k, n) => {
            let i = at(text, p);
            let open = ["[", "(", "{:a ", "#{", "#_", "#tag "][k];
            text.insert_str(i, &open.repeat(n));
        }
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

proptest! {
    // 300 cases each by default (about a second); PROPTEST_CASES=100000 for a long hunt.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_histories_never_panic(
        seed in 0..SEEDS.len(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut text = SEEDS[seed].to_string();
        for m in &mutations {
            apply(&mut text, m);
        }
        answers_cleanly(&text);
    }

    #[test]
    fn edn_flavoured_noise_never_panics(
        chars in prop::collection::vec(prop::sample::select(ALPHABET), 0..300),
    ) {
        let text: String = chars.into_iter().collect();
        answers_cleanly(&text);
        answers_cleanly(&format!("[{text}]"));
        answers_cleanly(&format!("INFO  jepsen.util - 0 :invoke :write {text}"));
    }

    #[test]
    fn arbitrary_text_never_panics(chars in prop::collection::vec(any::<char>(), 0..200)) {
        let text: String = chars.into_iter().collect();
        answers_cleanly(&text);
    }

    #[test]
    fn seeds_are_read_and_answered(seed in 0..SEEDS.len()) {
        prop_assert!(parse_text(SEEDS[seed], None).is_ok(), "{}", SEEDS[seed]);
        answers_cleanly(SEEDS[seed]);
    }
}
