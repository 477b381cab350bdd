//! Claims: one checkable statement of a paper, our number, the paper's, and a verdict computed
//! from the numbers, never set by hand.
//!
//! Every claim goes through [`Evidence`]: the rule reads its numbers through it, and the verdict
//! is [`Verdict::Fails`] when a number the rule depends on is missing, not finite, or zero (or
//! negative) where it divides or scales another, whatever the rule says (a NaN compares false,
//! so `max` folds and `>=` tests would otherwise let a claim hold on nothing); and
//! [`Verdict::NotJudged`] when a tolerance the rule takes from a confidence interval rests on
//! fewer than [`MIN_SEEDS_FOR_CI`] values (a 95 % interval over two seeds is about twelve
//! standard errors wide, so a "within noise" claim would hold trivially).

use serde::Serialize;

use crate::stats::Estimate;

/// Fewest values a confidence interval needs before a claim uses it as a tolerance.
pub const MIN_SEEDS_FOR_CI: usize = 5;

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// The rule holds on numbers that were all measured.
    #[serde(rename = "holds")]
    Holds,
    /// The rule fails, or a number it needs was not measured.
    #[serde(rename = "fails")]
    Fails,
    /// The numbers are too thin to judge (a CI tolerance over too few seeds).
    #[serde(rename = "not judged")]
    NotJudged,
}

impl Verdict {
    /// `holds`, `fails` or `not judged`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Fails => "fails",
            Verdict::NotJudged => "not judged",
        }
    }
}

/// One entry of `claims.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Claim {
    /// Stable identifier (`a1-probing-not-slower`, …).
    pub id: String,
    /// The claim in words.
    pub claim: String,
    /// What we measured (numbers, or an object of numbers).
    pub ours: serde_json::Value,
    /// What the paper reports.
    pub paper: serde_json::Value,
    /// True exactly when the verdict is [`Verdict::Holds`].
    pub holds: bool,
    /// The verdict, computed by [`Claim::judged`].
    pub verdict: Verdict,
    /// Why the claim fails without its rule being tried, or is not judged; `null` otherwise.
    pub note: Option<String>,
}

impl Claim {
    /// A claim judged by `rule` on the numbers `evidence` read (see [`Evidence`]).
    pub fn judged(
        id: &str,
        claim: &str,
        ours: serde_json::Value,
        paper: serde_json::Value,
        evidence: Evidence,
        rule: bool,
    ) -> Self {
        let (verdict, note) = evidence.verdict(rule);
        Claim {
            id: id.to_owned(),
            claim: claim.to_owned(),
            ours,
            paper,
            holds: verdict == Verdict::Holds,
            verdict,
            note,
        }
    }
}

/// The numbers a claim's rule reads, checked as they are read (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Numbers the rule needed that were missing, not finite, or not positive.
    missing: Vec<String>,
    /// Sizes of the samples behind CI tolerances that rest on too few values.
    thin: Vec<usize>,
}

impl Evidence {
    /// No numbers read yet.
    pub fn new() -> Self {
        Evidence::default()
    }

    /// A number the rule reads: it must be finite.
    pub fn num(&mut self, name: &str, x: f64) -> f64 {
        if !x.is_finite() {
            self.missing.push(format!("{name} is {}", describe(x)));
        }
        x
    }

    /// A number the rule divides by or scales a threshold with (a baseline): finite and
    /// positive.
    pub fn positive(&mut self, name: &str, x: f64) -> f64 {
        if !x.is_finite() {
            self.missing.push(format!("{name} is {}", describe(x)));
        } else if x <= 0.0 {
            self.missing.push(format!("{name} is {x}, not positive"));
        }
        x
    }

    /// Numbers the rule reads every one of: at least one, each finite.
    pub fn all<'a>(&mut self, name: &str, xs: &'a [f64]) -> &'a [f64] {
        if xs.is_empty() {
            self.missing.push(format!("{name}: nothing measured"));
        }
        for (i, x) in xs.iter().enumerate() {
            self.num(&format!("{name}[{i}]"), *x);
        }
        xs
    }

    /// A set the rule quantifies over ("at every RTT"): it must not be empty.
    pub fn some(&mut self, name: &str, count: usize) {
        if count == 0 {
            self.missing.push(format!("{name}: nothing measured"));
        }
    }

    /// The mean of an estimate: it must exist and be finite.
    pub fn mean(&mut self, name: &str, e: &Estimate) -> f64 {
        self.num(name, e.mean.unwrap_or(f64::NAN))
    }

    /// The half-width of an estimate's 95 % confidence interval, used as a tolerance: it needs
    /// [`MIN_SEEDS_FOR_CI`] values, else the claim is not judged. Returns 0 without an
    /// interval.
    pub fn ci(&mut self, name: &str, e: &Estimate) -> f64 {
        if e.n < MIN_SEEDS_FOR_CI {
            self.thin.push(e.n);
        }
        match e.ci95 {
            Some(c) => self.num(&format!("{name} (CI)"), c),
            None => 0.0,
        }
    }

    /// The verdict for `rule` on these numbers, and why when it is not the rule's.
    pub fn verdict(self, rule: bool) -> (Verdict, Option<String>) {
        if !self.missing.is_empty() {
            return (
                Verdict::Fails,
                Some(format!("not measured: {}", summary(&self.missing))),
            );
        }
        if let (Some(lo), Some(hi)) = (self.thin.iter().min(), self.thin.iter().max()) {
            let values = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo}–{hi}")
            };
            return (
                Verdict::NotJudged,
                Some(format!(
                    "too few seeds: {} confidence interval(s) it takes as tolerance rest on {values} \
                     value(s) each, fewer than {MIN_SEEDS_FOR_CI}",
                    self.thin.len()
                )),
            );
        }
        (if rule { Verdict::Holds } else { Verdict::Fails }, None)
    }
}

fn describe(x: f64) -> &'static str {
    if x.is_nan() {
        "missing (not a number)"
    } else {
        "not finite"
    }
}

/// The first few of `items`, and how many more.
fn summary(items: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > SHOWN {
        s.push_str(&format!("; and {} more", items.len() - SHOWN));
    }
    s
}

/// Helpers for the per-experiment tests: every claim must fail when any number it depends on
/// is spoilt.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Claim, Verdict};

    /// Values that must make a claim fail wherever the rule reads them.
    pub const NOT_FINITE: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

    /// `make(inputs)` holds on `inputs`; and with any one of the inputs at `positions`
    /// replaced by any of `spoilers`, it fails, with a note saying what was not measured.
    pub fn fails_when_spoilt(
        inputs: &[f64],
        positions: impl IntoIterator<Item = usize>,
        spoilers: &[f64],
        make: impl Fn(&[f64]) -> Claim,
    ) {
        let good = make(inputs);
        assert_eq!(good.verdict, Verdict::Holds, "{}: {:?}", good.id, good.note);
        for i in positions {
            for &bad in spoilers {
                let mut spoilt = inputs.to_vec();
                spoilt[i] = bad;
                let c = make(&spoilt);
                assert_eq!(
                    c.verdict,
                    Verdict::Fails,
                    "{}: input {i} = {bad} should fail the claim",
                    c.id
                );
                assert!(!c.holds);
                assert_unmeasured(&c);
            }
        }
    }

    /// The claim fails with a "not measured" note.
    pub fn assert_unmeasured(c: &Claim) {
        assert_eq!(c.verdict, Verdict::Fails, "{}", c.id);
        assert!(
            c.note
                .as_deref()
                .is_some_and(|n| n.starts_with("not measured")),
            "{}: {:?}",
            c.id,
            c.note
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(evidence: Evidence, rule: bool) -> Claim {
        Claim::judged("c", "a claim", json!(1), json!(1), evidence, rule)
    }

    #[test]
    fn a_rule_that_holds_on_measured_numbers_holds() {
        let mut e = Evidence::new();
        let (a, b) = (e.num("a", 2.0), e.positive("b", 1.0));
        let c = claim(e, a >= b);
        assert_eq!((c.verdict, c.holds, c.note), (Verdict::Holds, true, None));
    }

    #[test]
    fn a_nan_an_infinity_a_zero_baseline_or_nothing_fails_the_claim_whatever_the_rule() {
        // fold(0.0, f64::max) ignores NaN: a deviation "max |x − base| / base" of NaN values
        // comes out 0, so the rule "≤ 5 %" holds on nothing. Through Evidence it cannot.
        let devs = [f64::NAN, f64::NAN];
        let mut e = Evidence::new();
        let worst = e
            .all("deviation", &devs)
            .iter()
            .copied()
            .fold(0.0, f64::max);
        let c = claim(e, worst <= 0.05);
        assert_eq!(c.verdict, Verdict::Fails);
        assert!(c.note.unwrap().contains("deviation[0] is missing"));

        let mut e = Evidence::new();
        e.positive("baseline", 0.0);
        assert_eq!(claim(e, true).verdict, Verdict::Fails);
        let mut e = Evidence::new();
        e.num("x", f64::INFINITY);
        assert_eq!(claim(e, true).verdict, Verdict::Fails);
        // "at every RTT" over no RTT at all.
        let mut e = Evidence::new();
        e.all("ratios", &[]);
        assert_eq!(claim(e, true).verdict, Verdict::Fails);
        let mut e = Evidence::new();
        e.some("RTTs", 0);
        assert_eq!(claim(e, true).verdict, Verdict::Fails);
        let mut e = Evidence::new();
        e.mean("time", &Estimate::from_sample(&[]));
        assert_eq!(claim(e, true).verdict, Verdict::Fails);
    }

    #[test]
    fn a_ci_tolerance_over_too_few_seeds_is_not_judged() {
        let two = Estimate::from_sample(&[1.0, 9.0]);
        let mut e = Evidence::new();
        let slack = e.ci("time", &two);
        assert!(slack > 30.0, "t(1) makes two seeds' CI huge: {slack}");
        let c = claim(e, true);
        assert_eq!((c.verdict, c.holds), (Verdict::NotJudged, false));
        assert_eq!(
            c.note.as_deref(),
            Some(
                "too few seeds: 1 confidence interval(s) it takes as tolerance rest on 2 value(s) \
                 each, fewer than 5"
            )
        );
        let five = Estimate::from_sample(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let mut e = Evidence::new();
        e.ci("time", &five);
        assert_eq!(claim(e, true).verdict, Verdict::Holds);
        // Missing numbers weigh more than thin ones.
        let mut e = Evidence::new();
        e.ci("time", &two);
        e.num("x", f64::NAN);
        assert_eq!(claim(e, true).verdict, Verdict::Fails);
    }

    #[test]
    fn claims_json_carries_verdict_and_note() {
        let mut e = Evidence::new();
        e.num("x", f64::NAN);
        let v = serde_json::to_value(claim(e, true)).unwrap();
        assert_eq!(v["holds"], false);
        assert_eq!(v["verdict"], "fails");
        assert_eq!(v["note"], "not measured: x is missing (not a number)");
        let v = serde_json::to_value(claim(Evidence::new(), true)).unwrap();
        assert_eq!(
            (v["verdict"].as_str(), v["note"].is_null()),
            (Some("holds"), true)
        );
    }
}
