/*
 * quantity.c - Kubernetes resource quantities (apimachinery
 * pkg/api/resource): <sign><digits>[.<digits>][<suffix>], suffix one of
 * the binary Ki Mi Gi Ti Pi Ei, the decimal m (none) k M G T P E, or an
 * exponent e<n> / E<n>; read exactly (integers, no float) and turned
 * into milli-units rounded up, as Quantity.MilliValue() rounds.
 */
#include <ctype.h>
#include <string.h>

#include <gpufleet/scale.h>

#define SIG_MAX 36 /* significant digits kept exactly in 128 bits */

__extension__ typedef __int128 i128;

struct num {
	i128 m;	  /* significant digits */
	int dexp; /* value = m * 10^dexp * 2^bexp */
	int bexp;
	bool neg, zero;
};

static int parse_suffix(const char *p, struct num *n)
{
	static const struct {
		const char *s;
		int d, b;
	} tab[] = {
		{ "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 },
		{ "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
		{ "m", -3, 0 },	 { "k", 3, 0 },	  { "M", 6, 0 },
		{ "G", 9, 0 },	 { "T", 12, 0 },  { "P", 15, 0 },
		{ "E", 18, 0 },	 { "", 0, 0 },
	};
	if ((*p == 'e' || *p == 'E') && p[1] != '\0') {
		const char *q = p + 1;
		bool neg = false;
		if (*q == '+' || *q == '-')
			neg = *q++ == '-';
		if (!isdigit((unsigned char)*q))
			return GF_EPARSE;
		long x = 0;
		for (; isdigit((unsigned char)*q); q++)
			if ((x = x * 10 + (*q - '0')) > 100000)
				return GF_ERANGE;
		if (*q)
			return GF_EPARSE;
		n->dexp += neg ? -(int)x : (int)x;
		return 0;
	}
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(p, tab[i].s) == 0) {
			n->dexp += tab[i].d;
			n->bexp = tab[i].b;
			return 0;
		}
	return GF_EPARSE;
}

static int parse_number(const char *s, struct num *n, const char **rest)
{
	const char *p = s;
	memset(n, 0, sizeof(*n));
	if (*p == '+' || *p == '-')
		n->neg = *p++ == '-';
	int digits = 0, sig = 0;
	bool point = false;
	for (;; p++) {
		if (*p == '.' && !point) {
			point = true;
			continue;
		}
		if (!isdigit((unsigned char)*p))
			break;
		digits++;
		int d = *p - '0';
		if (sig == 0 && d == 0) {
			if (point)
				n->dexp--;
			continue;
		}
		if (sig >= SIG_MAX)
			return GF_ERANGE;
		n->m = n->m * 10 + d;
		sig++;
		if (point)
			n->dexp--;
	}
	if (digits == 0)
		return GF_EPARSE;
	n->zero = sig == 0;
	*rest = p;
	return 0;
}

int gf_quantity_milli(const char *s, int64_t *out)
{
	struct num n;
	const char *rest;
	if (!s || !*s)
		return GF_EPARSE;
	int rc = parse_number(s, &n, &rest);
	if (rc == 0)
		rc = parse_suffix(rest, &n);
	if (rc)
		return rc;
	if (n.zero) {
		*out = 0;
		return 0;
	}
	if (n.neg)
		return GF_ERANGE;
	const i128 cap = (i128)INT64_MAX;
	i128 v = n.m;
	for (int i = 0; i < n.bexp; i++)
		if ((v *= 2) > cap * 1000000000000000000LL)
			return GF_ERANGE;
	int e = n.dexp + 3; /* milli */
	if (e >= 0) {
		for (int i = 0; i < e; i++)
			if ((v *= 10) > cap)
				return GF_ERANGE;
		if (v > cap)
			return GF_ERANGE;
		*out = (int64_t)v;
		return 0;
	}
	/* divide by 10^-e, rounding up; past 38 digits the quotient is 0
	 * and the remainder nonzero */
	i128 q = v;
	bool rem = false;
	for (int i = 0; i < -e; i++) {
		if (q == 0) {
			rem = true;
			break;
		}
		if (q % 10)
			rem = true;
		q /= 10;
	}
	if (rem)
		q++;
	if (q > cap)
		return GF_ERANGE;
	*out = (int64_t)q;
	return 0;
}
