package compare

import "math"

// bonferroniT is the Student t quantile for one of judged intervals that
// must hold their true changes all together with Confidence (Bonferroni:
// each two-sided at 1 − (1 − Confidence)/judged), on df degrees of
// freedom. The family is what one verdict calls: one run (or setting, or
// repeated plan) against the baseline, so every comparison holds its
// false calls to at most 1 − Confidence whatever else is beside it.
// Every interval of this package is drawn with it.
func bonferroniT(judged int, df float64) float64 {
	return studentT(1-(1-Confidence)/(2*float64(max(judged, 1))), df)
}

// studentT is the p quantile (0.5 ≤ p < 1) of Student's t distribution
// with df degrees of freedom (df > 0, not necessarily whole: a Welch
// combination of two runs' spreads gives fractional ones). It is found by
// bisection on the distribution function, which is exact to float64
// precision here; +Inf when df is not positive.
func studentT(p, df float64) float64 {
	if !(df > 0) || p >= 1 {
		return math.Inf(1)
	}
	if p <= 0.5 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for studentCDF(hi, df) < p {
		lo, hi = hi, 2*hi
		if hi > 1e15 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if studentCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// studentCDF is P(T ≤ t) for t ≥ 0: 1 − ½·I_{df/(df+t²)}(df/2, ½).
func studentCDF(t, df float64) float64 {
	return 1 - 0.5*regIncBeta(df/2, 0.5, df/(df+t*t))
}

// regIncBeta is the regularised incomplete beta function I_x(a, b),
// evaluated by its continued fraction on the side where that converges
// fast (x below the mean (a+1)/(a+b+2)), by symmetry on the other.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction is the continued fraction of the incomplete beta function,
// by the modified Lentz method.
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1.0; m <= 500; m++ {
		num := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		h *= d * c
		num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		step := d * c
		h *= step
		if math.Abs(step-1) < eps {
			break
		}
	}
	return h
}
