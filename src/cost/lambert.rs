//! The principal branch `W0` of the Lambert W function and the optimal fan-out `b_opt` of
//! recursive multiplying (../shared/seeds/recursive-multiplying.txt, eq. 5 and Fig. 3).
//!
//! Eq. 4 costs `(alpha_p + b alpha_r) log_{b+1} N`; per factor of `e` in `N` that is
//! `f(b) = (alpha_p + b alpha_r) / ln(b + 1)`. Setting `f'(b) = 0` with `x = b + 1` and
//! `rho = alpha_p / alpha_r` gives `x (ln x - 1) = rho - 1`; with `x = e^(y+1)` this is
//! `y e^y = (rho - 1) / e`, so `y = W0((rho - 1)/e)` and
//! `b_opt = e^(W0((alpha_p - alpha_r)/(e alpha_r)) + 1) - 1` (eq. 5). It depends only on the
//! ratio `rho`; `rho = 1` gives `e - 1`, `rho = 4` gives about 3.97.
//!
//! This is transcendental, so it is computed in `f64` (unlike the exact costs of the rest of
//! [`crate::cost`]). Accuracy: for `z > e`, Newton's iteration on `w + ln w = ln z` (no overflow
//! even for `z` near `f64::MAX`); otherwise Halley's iteration on `w e^w - z` from a branch-point
//! series (near `-1/e`) or `ln(1 + z)`. Both stop when a step is below `4 eps (1 + |w|)`, so the
//! result is within a few ulps of `W0(z)` wherever `W0` is well conditioned (tested: the relative
//! residual `|w e^w - z| / max(1, |z|)` is below `4 eps (1 + |w|)`, the floor set by rounding `w`
//! itself, over `[-1/e, 1e300]`, and known values such as `W0(1) = 0.567143290409784`,
//! `W0(e) = 1`, `W0(10 e^10) = 10` hold to `1e-15` relative). Within about `1e-8` of the branch
//! point `-1/e` the function has a square-root singularity and the error in `w` grows to about
//! `sqrt(eps) ~ 1e-8`.

/// `1/e`.
const INV_E: f64 = 0.367_879_441_171_442_33;

/// The principal branch of the Lambert W function: the `w >= -1` with `w e^w = z`. `None` for
/// `z < -1/e` (no real solution) and for NaN; `z = +inf` gives `+inf`.
pub fn lambert_w0(z: f64) -> Option<f64> {
    if z.is_nan() || z < -INV_E - 4.0 * f64::EPSILON {
        return None;
    }
    if z == f64::INFINITY {
        return Some(f64::INFINITY);
    }
    if z == 0.0 {
        return Some(0.0);
    }
    if z <= -INV_E {
        return Some(-1.0);
    }
    let tol = |w: f64| 4.0 * f64::EPSILON * (1.0 + w.abs());
    if z > std::f64::consts::E {
        // Newton on g(w) = w + ln w - ln z, from the asymptotic expansion.
        let lz = z.ln();
        let llz = lz.ln();
        let mut w = lz - llz + llz / lz;
        for _ in 0..64 {
            let step = (w + w.ln() - lz) / (1.0 + 1.0 / w);
            w -= step;
            if step.abs() <= tol(w) {
                break;
            }
        }
        return Some(w);
    }
    let mut w = if z < -0.25 {
        // Series about the branch point: p = sqrt(2 (e z + 1)).
        let p = (2.0 * (std::f64::consts::E * z + 1.0)).max(0.0).sqrt();
        -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    } else {
        z.ln_1p()
    };
    for _ in 0..64 {
        let ew = w.exp();
        let f = w * ew - z;
        let wp1 = w + 1.0;
        if wp1 <= 0.0 {
            return Some(-1.0);
        }
        let step = f / (ew * wp1 - (w + 2.0) * f / (2.0 * wp1));
        if !step.is_finite() {
            break;
        }
        w -= step;
        if step.abs() <= tol(w) {
            break;
        }
    }
    Some(w.max(-1.0))
}

/// Eq. 5: the real fan-out `b` minimising eq. 4 for the overlap ratio `rho = alpha_p / alpha_r`:
/// `e^(W0((rho - 1)/e) + 1) - 1`. `None` for a negative or NaN ratio; `+inf` gives `+inf`.
/// Fig. 3 plots it (about 3.97 at `rho = 4`; `e - 1` at `rho = 1`, where every message costs
/// the same whether it overlaps or not).
pub fn b_opt(ratio: f64) -> Option<f64> {
    if ratio.is_nan() || ratio < 0.0 {
        return None;
    }
    let w = lambert_w0((ratio - 1.0) / std::f64::consts::E)?;
    Some((w + 1.0).exp() - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-15 * b.abs().max(1.0);
        assert_eq!(lambert_w0(0.0), Some(0.0));
        assert!(close(lambert_w0(1.0).unwrap(), 0.567_143_290_409_783_8));
        assert!(close(lambert_w0(std::f64::consts::E).unwrap(), 1.0));
        assert!(close(lambert_w0(-INV_E).unwrap(), -1.0));
        // W(-ln 2 / 2) = -ln 2.
        let ln2 = std::f64::consts::LN_2;
        assert!(close(lambert_w0(-ln2 / 2.0).unwrap(), -ln2));
        // W(2 e^2) = 2, W(10 e^10) = 10.
        assert!(close(lambert_w0(2.0 * 2f64.exp()).unwrap(), 2.0));
        assert!(close(lambert_w0(10.0 * 10f64.exp()).unwrap(), 10.0));
        assert_eq!(lambert_w0(-0.5), None);
        assert_eq!(lambert_w0(f64::NAN), None);
        assert_eq!(lambert_w0(f64::INFINITY), Some(f64::INFINITY));
        assert!(lambert_w0(f64::MAX).unwrap().is_finite());
    }

    #[test]
    fn residual_is_tiny() {
        let mut zs: Vec<f64> = (0..=2000).map(|i| -INV_E + i as f64 * 1e-3).collect();
        zs.extend((-30..=300).map(|k| 10f64.powi(k)));
        zs.extend([
            -INV_E + 1e-12,
            -INV_E + 1e-9,
            -0.3,
            -0.25,
            -0.2499,
            std::f64::consts::E - 1e-4,
            std::f64::consts::E + 1e-4,
        ]);
        for z in zs {
            let w = lambert_w0(z).unwrap();
            assert!(w >= -1.0, "W({z}) = {w}");
            // Compare in a form that does not overflow: w e^w against z.
            let resid = if z > 1e300 {
                (w + w.ln() - z.ln()).abs()
            } else {
                (w * w.exp() - z).abs() / z.abs().max(1.0)
            };
            // Rounding w costs eps |w| relative in e^w, so that is the floor.
            let bound = 4.0 * f64::EPSILON * (1.0 + w.abs());
            assert!(resid <= bound, "W({z}) = {w}: residual {resid}");
        }
    }

    /// Ternary search for the real minimum of `(rho + b) / ln(b + 1)` (eq. 4 per e-fold of N).
    fn numeric_min(rho: f64) -> f64 {
        let f = |b: f64| (rho + b) / (b + 1.0).ln();
        let (mut lo, mut hi) = (1e-9, 1e4);
        for _ in 0..400 {
            let m1 = lo + (hi - lo) / 3.0;
            let m2 = hi - (hi - lo) / 3.0;
            if f(m1) < f(m2) {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        (lo + hi) / 2.0
    }

    /// Fig. 3: b_opt against the overlap ratio; 3.97 at a ratio of 4 (Fig. 4's 1 us / 0.25 us).
    #[test]
    fn fig3_points() {
        let b4 = b_opt(4.0).unwrap();
        assert!((b4 - 3.97).abs() < 0.005, "{b4}");
        assert!((b_opt(1.0).unwrap() - (std::f64::consts::E - 1.0)).abs() < 1e-15);
        assert!(b_opt(0.0).unwrap().abs() < 1e-12);
        assert_eq!(b_opt(-1.0), None);
        // Table 1's measured ratios: minimum 1.34/0.34, median 1.51/0.38 (both close to 4).
        let bmin = b_opt(1.34 / 0.34).unwrap();
        let bmed = b_opt(1.51 / 0.38).unwrap();
        assert!(
            (3.9..4.0).contains(&bmin) && (3.9..4.0).contains(&bmed),
            "{bmin} {bmed}"
        );
        let mut last = 0.0;
        for i in 1..=100 {
            let rho = i as f64 * 0.5;
            let b = b_opt(rho).unwrap();
            assert!(b > last, "b_opt must grow with the ratio");
            last = b;
            let m = numeric_min(rho);
            assert!((b - m).abs() < 1e-5 * m.max(1.0), "rho {rho}: {b} vs {m}");
        }
    }
}
