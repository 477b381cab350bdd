//! Small statistics for sweeps: mean and the half-width of a 95 % Student-t confidence interval,
//! and the median used by `roam bench`.

/// Two-sided 95 % quantiles of Student's t distribution (t₀.₉₇₅) for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706_204_736,
    4.302_652_730,
    3.182_446_305,
    2.776_445_105,
    2.570_581_836,
    2.446_911_851,
    2.364_624_252,
    2.306_004_135,
    2.262_157_163,
    2.228_138_852,
    2.200_985_160,
    2.178_812_830,
    2.160_368_656,
    2.144_786_688,
    2.131_449_546,
    2.119_905_299,
    2.109_815_578,
    2.100_922_040,
    2.093_024_054,
    2.085_963_447,
    2.079_613_845,
    2.073_873_068,
    2.068_657_610,
    2.063_898_562,
    2.059_538_553,
    2.055_529_439,
    2.051_830_516,
    2.048_407_142,
    2.045_229_642,
    2.042_272_456,
];

/// The standard normal quantile z₀.₉₇₅.
const Z975: f64 = 1.959_963_984_540_054;

/// t₀.₉₇₅ with `df` degrees of freedom: exact table values up to 30, beyond that the
/// Cornish–Fisher expansion of t around the normal quantile (error < 1e-5 for df > 30).
///
/// Returns `None` for `df == 0` (no interval exists with one sample).
pub fn t_quantile_975(df: usize) -> Option<f64> {
    match df {
        0 => None,
        1..=30 => Some(T975[df - 1]),
        _ => {
            let z = Z975;
            let n = df as f64;
            let z3 = z * z * z;
            let z5 = z3 * z * z;
            let z7 = z5 * z * z;
            let g1 = (z3 + z) / 4.0;
            let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
            let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
            Some(z + g1 / n + g2 / (n * n) + g3 / (n * n * n))
        }
    }
}

/// Mean of a sample and the half-width of its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Sample size.
    pub n: usize,
    /// Sample mean; `None` for an empty sample.
    pub mean: Option<f64>,
    /// Half-width `t₀.₉₇₅(n−1) · s / √n`; `None` when `n < 2`.
    pub ci95: Option<f64>,
}

impl Estimate {
    /// Estimates the mean of `values` with a Student-t 95 % confidence interval.
    ///
    /// Non-finite values are ignored (they would poison the mean).
    pub fn from_sample(values: &[f64]) -> Self {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let n = finite.len();
        if n == 0 {
            return Estimate {
                n,
                mean: None,
                ci95: None,
            };
        }
        let mean = finite.iter().sum::<f64>() / n as f64;
        let ci95 = t_quantile_975(n - 1).map(|t| {
            let var = finite.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t * (var / n as f64).sqrt()
        });
        Estimate {
            n,
            mean: Some(mean),
            ci95,
        }
    }
}

/// Median of a sample (mean of the two middle values for an even size); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantile_matches_table_values() {
        assert_eq!(t_quantile_975(0), None);
        assert!(close(t_quantile_975(1).unwrap(), 12.7062, 1e-4));
        assert!(close(t_quantile_975(4).unwrap(), 2.7764, 1e-4));
        assert!(close(t_quantile_975(9).unwrap(), 2.2622, 1e-4));
        assert!(close(t_quantile_975(30).unwrap(), 2.0423, 1e-4));
    }

    #[test]
    fn t_quantile_approximation_beyond_table_is_accurate() {
        // Reference values of t₀.₉₇₅ (R: qt(0.975, df)).
        for (df, t) in [
            (31, 2.039_513),
            (40, 2.021_075),
            (60, 2.000_298),
            (120, 1.979_930),
            (1000, 1.962_339),
        ] {
            let got = t_quantile_975(df).unwrap();
            assert!(close(got, t, 2e-5), "df={df}: {got} vs {t}");
        }
    }

    #[test]
    fn t_quantile_decreases_towards_normal_quantile() {
        let mut prev = f64::INFINITY;
        for df in 1..500 {
            let t = t_quantile_975(df).unwrap();
            assert!(t < prev && t > Z975, "df={df}");
            prev = t;
        }
    }

    #[test]
    fn estimate_of_known_sample() {
        // mean 5, s = sqrt(2.5), n = 5, t(4) = 2.776445 → half-width 1.963243.
        let e = Estimate::from_sample(&[3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(e.n, 5);
        assert!(close(e.mean.unwrap(), 5.0, 1e-12));
        assert!(close(e.ci95.unwrap(), 1.963_243, 1e-5));
    }

    #[test]
    fn single_sample_has_no_interval() {
        let e = Estimate::from_sample(&[42.0]);
        assert_eq!(e.mean, Some(42.0));
        assert_eq!(e.ci95, None);
    }

    #[test]
    fn empty_and_non_finite_samples() {
        let e = Estimate::from_sample(&[]);
        assert_eq!((e.n, e.mean, e.ci95), (0, None, None));
        let e = Estimate::from_sample(&[1.0, f64::NAN, 3.0]);
        assert_eq!(e.n, 2);
        assert_eq!(e.mean, Some(2.0));
    }

    #[test]
    fn identical_samples_have_zero_width() {
        let e = Estimate::from_sample(&[2.0, 2.0, 2.0]);
        assert_eq!(e.ci95, Some(0.0));
    }

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
