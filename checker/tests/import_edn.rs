//! EDN histories in the layouts Jepsen and Knossos write (all written here by hand): modern
//! Jepsen's `history.edn`, Knossos' vector of multi-line maps, `#jepsen.history.Op` records,
//! independent `[key value]` histories; values nested too deep; and the rule that a model
//! never passes a history whose operations it does not take.

use lockpick_checker::import::edn::MAX_DEPTH;
use lockpick_checker::import::{parse_text, parse_text_lines, Format, ImportError};
use lockpick_checker::lin_search::{Budget, Datum, History, OpF};
use lockpick_checker::linearizability::check_history;
use lockpick_checker::models::{kv, lease, mutex, register, Model};
use lockpick_checker::verdict::Verdict;

fn check(h: &History, model: &'static dyn Model) -> Verdict {
    check_history(h, model, &Budget::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .verdict
}

/// Modern Jepsen: one op map per line, `:index` and `:time` (ns), the nemesis among them,
/// keys in any order, an `:error` with a namespaced keyword and a `\u` escape.
const JEPSEN_HISTORY: &str = r#"{:index 0, :time 1000, :type :invoke, :process 0, :f :write, :value 1}
{:index 1, :time 2000, :type :invoke, :process 1, :f :read, :value nil}
{:index 2, :time 2500, :type :info, :process :nemesis, :f :start-partition, :value #{"n1" "n2"}}
{:index 3, :time 3000, :type :ok, :process 0, :f :write, :value 1}
{:index 4, :time 4000, :type :ok, :process 1, :f :read, :value 1}
{:index 5, :time 5000, :type :invoke, :process 0, :f :cas, :value [1 2]}
{:index 6, :time 6000, :type :info, :process 0, :f :cas, :value [1 2], :error [:jepsen.client/timeout "caf\u00e9"]}
{:index 7, :time 7000, :type :invoke, :process 2, :f :read, :value nil}
{:index 8, :time 8000, :type :ok, :process 2, :f :read, :value 2}
"#;

#[test]
fn modern_jepsen_history_edn_reads_index_and_time() {
    assert_eq!(Format::detect(JEPSEN_HISTORY), Some(Format::JepsenEdn));
    let imported = parse_text_lines(JEPSEN_HISTORY, None).expect("parse");
    let h = &imported.history;
    assert_eq!(h.ops.len(), 4, "{h:?}");
    assert_eq!((h.ops[0].call, h.ops[0].ret), (0, Some(3)), ":index orders");
    assert_eq!((h.ops[0].call_ns, h.ops[0].ret_ns), (1000, Some(3000)));
    assert!(h.ops[2].is_open(), "the timed-out cas may have happened");
    assert_eq!(imported.lines, [1, 2, 6, 8]);
    assert_eq!(check(h, &register::CAS_REGISTER), Verdict::Valid);
    // Reading 3, which nobody wrote, is not linearizable.
    let bad = JEPSEN_HISTORY.replace(
        ":process 2, :f :read, :value 2",
        ":process 2, :f :read, :value 3",
    );
    assert_eq!(
        check(&parse_text(&bad, None).unwrap(), &register::CAS_REGISTER),
        Verdict::Invalid
    );
}

/// Knossos' test histories: a comment, then one vector whose maps span several lines, with
/// commas, a discarded op and a trailing comment inside.
const KNOSSOS_VECTOR: &str = r#";; A register history in the layout of Knossos' data/ files.
;; Written by hand for lockpick's tests.
[{:process 0,
  :type    :invoke,
  :f       :write,
  :value   3}
 {:process 1 :type :invoke :f :read :value nil} ; a read
 #_{:process 9, :type :invoke, :f :write, :value 99}
 {:process 0
  :type :ok
  :f :write
  :value 3},
 {:process 1, :type :ok, :f :read, :value 3}
 {:process 2, :type :invoke, :f :read, :value nil}
 {:process 2, :type :ok, :f :read, :value 0}
]
"#;

#[test]
fn knossos_vector_of_multi_line_maps_after_a_comment_imports() {
    assert_eq!(Format::detect(KNOSSOS_VECTOR), Some(Format::JepsenEdn));
    let imported = parse_text_lines(KNOSSOS_VECTOR, None).expect("parse");
    let h = &imported.history;
    let fs: Vec<OpF> = h.ops.iter().map(|o| o.f).collect();
    assert_eq!(fs, [OpF::Write, OpF::Read, OpF::Read]);
    assert_eq!(
        imported.lines,
        [3, 7, 14],
        "each op names the line it starts on"
    );
    assert_eq!(
        (h.ops[0].call, h.ops[0].ret),
        (3, Some(9)),
        "one op per line: positions are lines"
    );
    // Reading 0 after 3 was written and read: invalid, and the discarded write of 99 does
    // not count.
    assert_eq!(check(h, &register::REGISTER), Verdict::Invalid);
    let ok = KNOSSOS_VECTOR.replace(":ok, :f :read, :value 0", ":ok, :f :read, :value 3");
    assert_eq!(
        check(&parse_text(&ok, None).unwrap(), &register::REGISTER),
        Verdict::Valid
    );
}

#[test]
fn jepsen_history_op_records_import_on_one_or_many_lines() {
    let text = "#jepsen.history.Op{:index 0, :time 5, :type :invoke, :process 0, :f :acquire, :value nil}\n\
                #jepsen.history.Op{:index 1, :time 9, :type :ok, :process 0, :f :acquire, :value 4}\n\
                #jepsen.history.Op{:index 2, :time 12, :type :invoke, :process 1,\n  :f :acquire, :value nil}\n\
                #jepsen.history.Op{:index 3, :time 20, :type :ok, :process 1, :f :acquire, :value 5}\n";
    assert_eq!(Format::detect(text), Some(Format::JepsenEdn));
    let imported = parse_text_lines(text, None).expect("parse");
    assert_eq!(imported.history.ops.len(), 2);
    assert_eq!(imported.lines, [1, 3]);
    assert_eq!(imported.history.ops[0].out, Some(Datum::Int(4)));
    // Two holders, nobody released: not a mutex.
    assert_eq!(check(&imported.history, &mutex::MUTEX), Verdict::Invalid);
    // In a vector as well.
    let vector = format!("[{text}]");
    assert_eq!(parse_text(&vector, None).unwrap().ops.len(), 2);
}

#[test]
fn every_edn_form_in_an_op_map_is_read_or_refused_by_name() {
    // Characters, sets, tagged values, namespaced maps, metadata and bigints beside the keys
    // the importer reads do not get in the way.
    let text = r#"{:process 0, :type :invoke, :f :put, :key "k\u00e9", :value "a\tb", :c \a, :nl \newline, :s #{1 2}, :at #inst "2024-05-01T00:00:00.000-00:00", :m #:jepsen.history{:x 1}, :big 123456789012345678901234567890N, :ratio 1/3, :meta ^{:tag 1} [1]}
{:process 0, :type :ok, :f :put, :key "k\u00e9", :value "a\tb"}
{:process 1, :type :invoke, :f :get, :key "k\u00e9", :value nil}
{:process 1, :type :ok, :f :get, :key "k\u00e9", :value "a\tb"}
"#;
    let h = parse_text(text, None).expect("parse");
    assert_eq!(h.ops[0].key.as_deref(), Some("ké"));
    assert_eq!(h.ops[1].out, Some(Datum::Str("a\tb".into())));
    assert_eq!(check(&h, &kv::KV), Verdict::Valid);
    // A value the models cannot take is an error naming its line.
    let big = text.replace(
        "{:process 1, :type :ok, :f :get, :key \"k\\u00e9\", :value \"a\\tb\"}",
        "{:process 1, :type :ok, :f :get, :key \"k\\u00e9\", :value 99999999999999999999N}",
    );
    match parse_text(&big, None) {
        Err(ImportError::Parse {
            line: 4, message, ..
        }) => {
            assert!(message.contains("outside the 64-bit range"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

/// Jepsen's independent checker: every value is `[key value]`; each key is its own register.
const INDEPENDENT: &str = r#"{:process 0, :type :invoke, :f :write, :value [1 10]}
{:process 0, :type :ok, :f :write, :value [1 10]}
{:process 1, :type :invoke, :f :write, :value [2 20]}
{:process 1, :type :ok, :f :write, :value [2 20]}
{:process 2, :type :invoke, :f :cas, :value [1 [10 11]]}
{:process 2, :type :ok, :f :cas, :value [1 [10 11]]}
{:process 3, :type :invoke, :f :read, :value [2 nil]}
{:process 3, :type :ok, :f :read, :value [2 20]}
{:process 4, :type :invoke, :f :read, :value [1 nil]}
{:process 4, :type :ok, :f :read, :value [1 11]}
"#;

#[test]
fn independent_tuples_split_per_key() {
    let h = parse_text(INDEPENDENT, None).expect("parse");
    let keys: Vec<Option<&str>> = h.ops.iter().map(|o| o.key.as_deref()).collect();
    assert_eq!(
        keys,
        [Some("1"), Some("2"), Some("1"), Some("2"), Some("1")]
    );
    assert_eq!(h.ops[2].arg, Datum::Pair(10, 11));
    let r = check_history(&h, &register::CAS_REGISTER, &Budget::default()).unwrap();
    assert_eq!((r.verdict, r.parts), (Verdict::Valid, 2));
    // Key 2 reads a value only key 1 ever held: invalid in key 2's part alone.
    let bad = INDEPENDENT.replace(
        ":ok, :f :read, :value [2 20]",
        ":ok, :f :read, :value [2 11]",
    );
    let r = check_history(
        &parse_text(&bad, None).unwrap(),
        &register::CAS_REGISTER,
        &Budget::default(),
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Invalid);
    assert_eq!(r.violation.unwrap().part, "key \"2\"");
    // A plain cas-only history, whose values are [from to] pairs too, stays one register.
    let cas = "{:process 0, :type :invoke, :f :cas, :value [1 2]}\n{:process 0, :type :fail, :f :cas, :value [1 2]}\n{:process 1, :type :invoke, :f :cas, :value [3 4]}\n";
    let h = parse_text(cas, None).unwrap();
    assert_eq!((h.ops.len(), h.ops[0].key.clone()), (1, None));
    assert_eq!(h.ops[0].arg, Datum::Pair(3, 4));
}

#[test]
fn independent_tuples_in_a_jepsen_log_split_per_key() {
    let log = "INFO  jepsen.util - 0\t:invoke\t:write\t[:x 1]\n\
               INFO  jepsen.util - 0\t:ok\t:write\t[:x 1]\n\
               INFO  jepsen.util - 1\t:invoke\t:read\t[:y nil]\n\
               INFO  jepsen.util - 1\t:ok\t:read\t[:y 1]\n";
    let h = parse_text(log, None).expect("parse");
    assert_eq!(h.ops[1].key.as_deref(), Some("y"));
    // y was never written: reading 1 there is invalid although x holds 1.
    assert_eq!(check(&h, &register::REGISTER), Verdict::Invalid);
}

#[test]
fn a_value_nested_thousands_deep_is_an_error_naming_line_and_limit() {
    // issue 12 item 3: an 8 KB line of brackets overflowed the stack (abort, exit 134).
    let deep = format!("{}{}", "[".repeat(4096), "]".repeat(4096));
    let edn = format!(
        "{{:process 0, :type :invoke, :f :write, :value 1}}\n{{:process 0, :type :ok, :f :write, :value {deep}}}\n"
    );
    let log = format!(
        "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t{deep}\n"
    );
    let vector = format!("[{{:process 0, :type :invoke, :f :write,\n :value {deep}}}]");
    for (text, format, line) in [
        (&edn, Format::JepsenEdn, 2),
        (&log, Format::JepsenLog, 2),
        (&vector, Format::JepsenEdn, 2),
    ] {
        match parse_text(text, None) {
            Err(ImportError::Parse {
                line: l, message, ..
            }) => {
                assert_eq!(l, line, "{format}: {message}");
                assert!(message.contains(&MAX_DEPTH.to_string()), "{message}");
            }
            other => panic!("{format}: {other:?}"),
        }
    }
}

const REGISTER_LOG: &str = "INFO  jepsen.util - 0\t:invoke\t:write\t1
INFO  jepsen.util - 0\t:ok\t:write\t1
INFO  jepsen.util - 1\t:invoke\t:read\tnil
INFO  jepsen.util - 1\t:ok\t:read\t2
";

const LOCK_EDN: &str = "{:process 0, :type :invoke, :f :acquire, :value nil}
{:process 0, :type :ok, :f :acquire, :value 1}
{:process 1, :type :invoke, :f :acquire, :value nil}
{:process 1, :type :ok, :f :acquire, :value 2}
";

#[test]
fn a_lock_model_refuses_a_register_history_instead_of_passing_it() {
    // issue 12 item 9: an illegal register history (reads 2, nobody wrote 2) was "valid" under
    // every lock model, which ignored all of its operations.
    let h = parse_text(REGISTER_LOG, None).unwrap();
    assert_eq!(check(&h, &register::REGISTER), Verdict::Invalid);
    for model in [
        &mutex::MUTEX as &dyn Model,
        &mutex::FENCED_MUTEX,
        &lease::LEASE,
    ] {
        let e = check_history(&h, model, &Budget::default()).expect_err("refused");
        let text = e.to_string();
        assert!(text.contains("acquire, release, renew"), "{text}");
        assert!(text.contains("would test nothing"), "{text}");
    }
    // A cas is outside even what the lock models pass over: named with its line.
    let kv = "{:process 0, :type :invoke, :f :acquire, :value nil}\n{:process 0, :type :ok, :f :acquire, :value 1}\n{:process 1, :type :invoke, :f :cas, :value [1 2]}\n";
    let imported = parse_text_lines(kv, None).unwrap();
    let e = check_history(&imported.history, &mutex::MUTEX, &Budget::default()).unwrap_err();
    assert_eq!(imported.lines[e.index], 3);
    assert!(
        e.reason.contains("cas is not an operation of this model"),
        "{e}"
    );
}

#[test]
fn register_and_kv_models_refuse_a_lock_history() {
    let h = parse_text(LOCK_EDN, None).unwrap();
    assert_eq!(check(&h, &mutex::MUTEX), Verdict::Invalid);
    for (model, takes) in [
        (&register::REGISTER as &dyn Model, "read, write"),
        (&register::CAS_REGISTER, "read, write, cas"),
        (&kv::KV, "get, put, append"),
    ] {
        let e = check_history(&h, model, &Budget::default()).expect_err("refused");
        assert_eq!(e.index, 0);
        assert!(e.reason.contains(takes), "{e}");
        assert!(e.reason.contains("acquire is not an operation"), "{e}");
    }
}

#[test]
fn an_empty_history_is_unknown_not_valid() {
    let h = parse_text("; nothing yet\n[]\n", None).unwrap();
    let r = check_history(&h, &register::REGISTER, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Unknown);
    assert!(r.unknown_reason.unwrap().contains("nothing was tested"));
}

#[test]
fn a_process_with_two_operations_in_flight_or_a_completion_without_invoke_is_refused() {
    // issue 14 item 9: leaving the first operation quietly open, or dropping a completion
    // that was never invoked, can hide a second holder.
    let two = "{:process 0, :type :invoke, :f :acquire, :value nil}\n{:process 0, :type :invoke, :f :acquire, :value nil}\n{:process 0, :type :ok, :f :acquire, :value 1}\n";
    match parse_text(two, None) {
        Err(ImportError::Parse {
            line: 2, message, ..
        }) => {
            assert!(message.contains("while its acquire of line 1"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    for kind in ["ok", "info", "fail"] {
        let orphan = format!("{{:process 0, :type :invoke, :f :acquire, :value nil}}\n{{:process 0, :type :ok, :f :acquire, :value 1}}\n{{:process 1, :type :{kind}, :f :acquire, :value 2}}\n");
        match parse_text(&orphan, None) {
            Err(ImportError::Parse {
                line: 3, message, ..
            }) => {
                assert!(
                    message.contains(&format!("acquire ({kind}) without invoking it")),
                    "{message}"
                )
            }
            other => panic!("{kind}: {other:?}"),
        }
    }
}
