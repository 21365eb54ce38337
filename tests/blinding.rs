//! Council blinding measured against the generated name corpus: every
//! agent, model and vendor name in every shape (camelCase, run together,
//! invisible characters, fullwidth, mathematical, Cyrillic and Greek
//! look-alikes) is replaced, and only it; text that names nobody comes
//! through byte for byte.

use std::collections::BTreeMap;

use baton::council::blind::Stripper;

use crate::support::names;

#[test]
fn every_name_in_every_shape_is_stripped_and_nothing_else() {
    let s = Stripper::new(&[]);
    let mut per_shape: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for case in names::corpus() {
        let (out, n) = s.strip(&case.text);
        let e = per_shape.entry(case.shape).or_default();
        e.0 += 1;
        if out != case.want || n != 1 {
            e.1 += 1;
            wrong.push(format!("{}: {:?} -> {out:?} ({n})", case.shape, case.text));
        }
    }
    for shape in names::SHAPES {
        assert!(
            per_shape[shape.name].0 >= 25,
            "{} has too few cases",
            shape.name
        );
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases wrong:\n{}",
        wrong.len(),
        per_shape.values().map(|v| v.0).sum::<usize>(),
        wrong.join("\n")
    );
}

#[test]
fn text_that_names_nobody_is_kept_byte_for_byte() {
    let s = Stripper::new(&[]);
    for text in names::KEPT {
        assert_eq!(s.strip(text), (text.to_string(), 0), "{text:?}");
    }
}
