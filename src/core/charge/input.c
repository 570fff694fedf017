/*
 * input.c - the chargeback input: interned strings, tuple tables, the
 * records, assets and telemetry rows, the few fields only some records
 * carry (labels, model, MIG profile, GPU ids, parsed once per distinct
 * combination), keys and matches, and the small helpers the renderers
 * share (rounding, times, a row's derived figures).
 *
 * Invariants: string id 0 is ""; an id once given always names the same
 * text; extra id 0 is "no extra"; the parts of extra i are parts[i].
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/charge.h>
#include <gpufleet/mig.h>

#include "core/charge/charge_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

/* --- tuples ------------------------------------------------------------ */

static uint64_t tuple_hash(const uint32_t *k, int w)
{
	uint64_t h = (uint64_t)w;
	for (int i = 0; i < w; i++)
		h = gf_hash_mix(h, k[i]);
	return h;
}

/* A key of a tuple table: tuple k against t's rows. */
struct tab_key {
	const struct gf__tab *t;
	const uint32_t *k;
};

static bool tab_eq(const void *key, uint32_t row)
{
	const struct tab_key *x = key;
	return memcmp(gf__tab_tuple(x->t, row), x->k,
		      (size_t)x->t->w * sizeof(*x->k)) == 0;
}

void gf__tab_init(struct gf__tab *t, int w)
{
	memset(t, 0, sizeof(*t));
	t->w = w;
	gf_hmap_init(&t->ix);
}

void gf__tab_release(struct gf__tab *t)
{
	gf_free(t->tup);
	gf_hmap_release(&t->ix);
	t->tup = NULL;
	t->n = t->alloc = 0;
}

uint32_t gf__tab_find(const struct gf__tab *t, const uint32_t *k)
{
	struct tab_key x = { t, k };
	int64_t id = gf_hmap_get(&t->ix, tuple_hash(k, t->w), tab_eq, &x);
	return id < 0 ? GF__NONE : (uint32_t)id;
}

uint32_t gf__tab_get(struct gf__tab *t, const uint32_t *k, bool add)
{
	size_t w = (size_t)t->w;
	uint32_t found = gf__tab_find(t, k);
	if (found != GF__NONE || !add)
		return found;
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 64;
		t->tup = gf_reallocarray(t->tup, t->alloc * w, sizeof(*k));
	}
	uint32_t id = (uint32_t)t->n;
	if (gf_hmap_put(&t->ix, tuple_hash(k, t->w), id))
		return GF__NONE;
	memcpy(t->tup + (size_t)id * w, k, w * sizeof(*k));
	t->n++;
	return id;
}

/* --- strings ----------------------------------------------------------- */

static const char *strs_at(const struct gf_charge_strs *s, uint32_t id)
{
	return s->bytes + s->off[id];
}

/* A key of the string store: p[0..len) against its strings. */
struct str_key {
	const struct gf_charge_strs *s;
	const char *p;
	size_t len;
};

static bool str_eq(const void *key, uint32_t row)
{
	const struct str_key *x = key;
	const char *q = strs_at(x->s, row);
	return strncmp(q, x->p, x->len) == 0 && q[x->len] == '\0';
}

static uint32_t strs_find(const struct gf_charge_strs *s, const char *p,
			  size_t len, uint64_t h)
{
	struct str_key x = { s, p, len };
	int64_t id = gf_hmap_get(&s->ix, h, str_eq, &x);
	return id < 0 ? GF__NONE : (uint32_t)id;
}

int gf_charge_intern(struct gf_charge_input *in, const char *p, size_t len,
		     uint32_t *id)
{
	struct gf_charge_strs *s = in->strs;
	if (len > GF_CHARGE_STR_MAX)
		return GF_ETOOBIG;
	if (memchr(p, '\0', len))
		len = strlen(p);
	uint64_t h = gf_hash_bytes(p, len);
	uint32_t found = strs_find(s, p, len, h);
	if (found != GF__NONE) {
		*id = found;
		return 0;
	}
	if (s->n == s->nalloc) {
		s->nalloc = s->nalloc ? s->nalloc * 2 : 1024;
		s->off = gf_reallocarray(s->off, s->nalloc, sizeof(*s->off));
	}
	while (s->len + len + 1 > s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 65536;
		s->bytes = gf_reallocarray(s->bytes, s->alloc, 1);
	}
	if (gf_hmap_put(&s->ix, h, (uint32_t)s->n))
		return GF_ETOOBIG;
	memcpy(s->bytes + s->len, p, len);
	s->bytes[s->len + len] = '\0';
	s->off[s->n] = s->len;
	s->len += len + 1;
	*id = (uint32_t)s->n++;
	return 0;
}

const char *gf_charge_str(const struct gf_charge_input *in, uint32_t id)
{
	if (id >= in->strs->n)
		return "";
	return strs_at(in->strs, id);
}

uint32_t gf_charge_lookup(const struct gf_charge_input *in, const char *p)
{
	size_t len = strlen(p);
	uint32_t id = strs_find(in->strs, p, len, gf_hash_bytes(p, len));
	return id == GF__NONE ? 0 : id;
}

static uint32_t intern0(struct gf_charge_input *in, const char *p)
{
	uint32_t id = 0;
	(void)!gf_charge_intern(in, p, strlen(p), &id); /* too long: "" (0) */
	return id;
}

/* --- the input ----------------------------------------------------------- */

void gf_charge_input_init(struct gf_charge_input *in)
{
	memset(in, 0, sizeof(*in));
	in->strs = gf_calloc(1, sizeof(*in->strs));
	in->extra_ix = gf_calloc(1, sizeof(*in->extra_ix));
	gf__tab_init(&in->extra_ix->tab, 8);
	intern0(in, ""); /* id 0 */
	in->extra_ix->unalloc = intern0(in, GF_CHARGE_UNALLOC);
	in->extra_ix->idle = intern0(in, GF_CHARGE_IDLE);
	in->extra_ix->filtered = intern0(in, GF_CHARGE_FILTERED);
	in->extra_ix->shared = intern0(in, GF_CHARGE_SHARED);
	in->extra_ix->deployment = intern0(in, "deployment");
	in->extra_ix->statefulset = intern0(in, "statefulset");
	in->extra_ix->daemonset = intern0(in, "daemonset");
	struct gf_charge_extra none;
	memset(&none, 0, sizeof(none));
	gf_charge_extra_id(in, &none);
}

void gf_charge_input_release(struct gf_charge_input *in)
{
	if (in->strs) {
		gf_free(in->strs->bytes);
		gf_free(in->strs->off);
		gf_hmap_release(&in->strs->ix);
		gf_free(in->strs);
	}
	if (in->extra_ix) {
		gf__tab_release(&in->extra_ix->tab);
		gf_free(in->extra_ix->parts);
		gf_free(in->extra_ix->pairs);
		gf_free(in->extra_ix->ids);
		gf_free(in->extra_ix);
	}
	gf_free(in->rec);
	gf_free(in->asset);
	gf_free(in->tele);
	gf_free(in->extra);
	memset(in, 0, sizeof(*in));
}

static void push_u32(uint32_t **a, size_t *n, size_t *alloc, uint32_t v)
{
	if (*n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		*a = gf_reallocarray(*a, *alloc, sizeof(**a));
	}
	(*a)[(*n)++] = v;
}

/* Split "k=v;k=v" into interned (name, value) pairs from *off on, *n
 * of them. */
static void parse_pairs(struct gf_charge_input *in, const char *s,
			uint32_t *off, uint32_t *n)
{
	struct gf_charge_hash *h = in->extra_ix;
	*off = (uint32_t)h->npairs;
	while (*s) {
		const char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		const char *eq = memchr(s, '=', len);
		if (eq && eq > s) {
			uint32_t k = 0, v = 0;
			/* too long: "" (0), as a missing one */
			(void)!gf_charge_intern(in, s, (size_t)(eq - s), &k);
			(void)!gf_charge_intern(in, eq + 1,
						len - (size_t)(eq - s) - 1, &v);
			push_u32(&h->pairs, &h->npairs, &h->pairs_alloc, k);
			push_u32(&h->pairs, &h->npairs, &h->pairs_alloc, v);
			(*n)++;
		}
		s += len;
		if (*s == ';')
			s++;
	}
}

static void parse_ids(struct gf_charge_input *in, const char *s,
		      struct gf__extra_parts *p)
{
	struct gf_charge_hash *h = in->extra_ix;
	p->id_off = (uint32_t)h->nids;
	while (*s && p->nids < GF_CHARGE_GPU_IDS_MAX) {
		const char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		uint32_t id = 0;
		if (len) {
			(void)!gf_charge_intern(in, s, len, &id); /* as above */
			push_u32(&h->ids, &h->nids, &h->ids_alloc, id);
			p->nids++;
		}
		s += len;
		if (*s == ';')
			s++;
	}
}

/* The first service, and the controller key's value: "kind:name" when
 * both are known (OpenCost's GenerateKey), too long: "" (none). */
static void parse_owner(struct gf_charge_input *in,
			const struct gf_charge_extra *x,
			struct gf__extra_parts *p)
{
	if (x->services) {
		const char *s = gf_charge_str(in, x->services);
		const char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		(void)!gf_charge_intern(in, s, len, &p->service);
	}
	if (!x->controller)
		return;
	if (!x->controller_kind) {
		p->controller = x->controller;
		return;
	}
	char buf[2 * GF_CHARGE_STR_MAX + 2];
	if (gf_fmt(buf, sizeof(buf), "%s:%s",
		   gf_charge_str(in, x->controller_kind),
		   gf_charge_str(in, x->controller)) == 0)
		(void)!gf_charge_intern(in, buf, strlen(buf), &p->controller);
}

uint32_t gf_charge_extra_id(struct gf_charge_input *in,
			    const struct gf_charge_extra *x)
{
	struct gf_charge_hash *h = in->extra_ix;
	uint32_t k[8] = { x->labels,   x->gpu_model,	   x->mig_profile,
			  x->gpu_ids,  x->controller_kind, x->controller,
			  x->services, x->annotations };
	size_t before = h->tab.n;
	uint32_t id = gf__tab_get(&h->tab, k, true);
	if (h->tab.n == before)
		return id;
	if (in->nextra == in->extra_alloc) {
		in->extra_alloc = in->extra_alloc ? in->extra_alloc * 2 : 64;
		in->extra = gf_reallocarray(in->extra, in->extra_alloc,
					    sizeof(*in->extra));
		h->parts = gf_reallocarray(h->parts, in->extra_alloc,
					   sizeof(*h->parts));
	}
	in->extra[in->nextra] = *x;
	struct gf__extra_parts *p = &h->parts[in->nextra];
	memset(p, 0, sizeof(*p));
	in->nextra++;
	if (x->labels)
		parse_pairs(in, gf_charge_str(in, x->labels), &p->pair_off,
			    &p->npairs);
	if (x->annotations)
		parse_pairs(in, gf_charge_str(in, x->annotations), &p->anno_off,
			    &p->nannos);
	if (x->gpu_ids)
		parse_ids(in, gf_charge_str(in, x->gpu_ids), p);
	parse_owner(in, x, p);
	return id;
}

#define ADD_ROW(arr, n, alloc, cap, v)                           \
	do {                                                     \
		if ((n) >= (cap))                                \
			return GF_ETOOBIG;                       \
		if ((n) == (alloc)) {                            \
			(alloc) = (alloc) ? (alloc)*2 : 256;     \
			(arr) = gf_reallocarray((arr), (alloc),  \
						sizeof(*(arr))); \
		}                                                \
		(arr)[(n)++] = *(v);                             \
		return 0;                                        \
	} while (0)

int gf_charge_add_record(struct gf_charge_input *in,
			 const struct gf_charge_record *r)
{
	ADD_ROW(in->rec, in->nrec, in->rec_alloc, GF_CHARGE_RECORDS_MAX, r);
}

int gf_charge_add_asset(struct gf_charge_input *in,
			const struct gf_charge_asset *a)
{
	ADD_ROW(in->asset, in->nasset, in->asset_alloc, GF_CHARGE_ASSETS_MAX,
		a);
}

int gf_charge_add_tele(struct gf_charge_input *in,
		       const struct gf_charge_tele *t)
{
	ADD_ROW(in->tele, in->ntele, in->tele_alloc, GF_CHARGE_TELE_MAX, t);
}

/* --- keys ---------------------------------------------------------------- */

#define GF_CHARGE_ALIAS_FIRST 12 /* key_names[]: "team" */
static const struct {
	const char *name;
	enum gf_charge_key_kind kind;
	const char *label;
} key_names[] = {
	{ "cluster", GF_CHARGE_KEY_CLUSTER, NULL },
	{ "node", GF_CHARGE_KEY_NODE, NULL },
	{ "namespace", GF_CHARGE_KEY_NAMESPACE, NULL },
	{ "pod", GF_CHARGE_KEY_POD, NULL },
	{ "container", GF_CHARGE_KEY_CONTAINER, NULL },
	{ "gpu_model", GF_CHARGE_KEY_GPU_MODEL, NULL },
	{ "controllerKind", GF_CHARGE_KEY_CONTROLLER_KIND, NULL },
	{ "controller", GF_CHARGE_KEY_CONTROLLER, NULL },
	{ "service", GF_CHARGE_KEY_SERVICE, NULL },
	{ "deployment", GF_CHARGE_KEY_DEPLOYMENT, NULL },
	{ "statefulset", GF_CHARGE_KEY_STATEFULSET, NULL },
	{ "daemonset", GF_CHARGE_KEY_DAEMONSET, NULL },
	/* gpufleet's names (GF_CHARGE_ALIAS_FIRST on), said as written */
	{ "team", GF_CHARGE_KEY_NAMESPACE, NULL },
	{ "job", GF_CHARGE_KEY_POD, NULL },
	{ "class", GF_CHARGE_KEY_LABEL, "class" },
	{ "user", GF_CHARGE_KEY_LABEL, "user" },
};

int gf_charge_key_parse(struct gf_charge_input *in, const char *s,
			struct gf_charge_key *k, struct gf_err *e)
{
	memset(k, 0, sizeof(*k));
	size_t pre = strncmp(s, "label:", 6) == 0	  ? 6
		     : strncmp(s, "annotation:", 11) == 0 ? 11
							  : 0;
	if (pre && s[pre]) {
		k->kind = pre == 6 ? GF_CHARGE_KEY_LABEL
				   : GF_CHARGE_KEY_ANNOTATION;
		if (gf_charge_intern(in, s + pre, strlen(s + pre), &k->label))
			return gf_err_set(e, GF_EINVAL,
					  "key '%.40s...' is too long", s);
		return 0;
	}
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (strcmp(s, key_names[i].name) == 0) {
			k->kind = key_names[i].kind;
			if (i >= GF_CHARGE_ALIAS_FIRST) /* team, job, ... */
				k->alias = key_names[i].name;
			if (key_names[i].label)
				k->label = intern0(in, key_names[i].label);
			return 0;
		}
	return gf_err_set(e, GF_EINVAL,
			  "unknown key '%.80s': expected cluster, node, "
			  "namespace, pod, container, label:NAME, gpu_model, "
			  "controllerKind, controller, service, deployment, "
			  "statefulset, daemonset, annotation:NAME, "
			  "team, job, class or user",
			  s);
}

void gf_charge_key_name(const struct gf_charge_input *in,
			const struct gf_charge_key *k, char *out, size_t size)
{
	static const char *const names[] = {
		"cluster",    "node",	    "namespace",  "pod",
		"container",  "label",	    "gpu_model",  "controllerKind",
		"controller", "service",    "deployment", "statefulset",
		"daemonset",  "annotation",
	};
	if (k->alias)
		gf_note(out, size, "%s", k->alias);
	else if (k->kind == GF_CHARGE_KEY_LABEL ||
		 k->kind == GF_CHARGE_KEY_ANNOTATION)
		gf_note(out, size, "%s:%s", names[k->kind],
			gf_charge_str(in, k->label));
	else
		gf_note(out, size, "%s", names[k->kind]);
}

int gf_charge_match_parse(struct gf_charge_input *in, const char *s,
			  struct gf_charge_match *m, struct gf_err *e)
{
	const char *eq = strchr(s, '=');
	char key[GF_CHARGE_STR_MAX + 8];
	if (!eq || eq == s)
		return gf_err_set(e, GF_EINVAL,
				  "cannot parse '%.80s': expected KEY=VALUE",
				  s);
	if ((size_t)(eq - s) >= sizeof(key))
		return gf_err_set(e, GF_EINVAL, "key in '%.40s...' too long",
				  s);
	memcpy(key, s, (size_t)(eq - s));
	key[eq - s] = '\0';
	int rc = gf_charge_key_parse(in, key, &m->key, e);
	if (rc)
		return rc;
	if (gf_charge_intern(in, eq + 1, strlen(eq + 1), &m->value))
		return gf_err_set(e, GF_EINVAL, "value in '%.40s...' too long",
				  s);
	return 0;
}

/* The value of `name` among n pairs from off, or the "__unallocated__"
 * id. */
static uint32_t pair_of(const struct gf_charge_hash *h, uint32_t off,
			uint32_t n, uint32_t name)
{
	for (uint32_t i = 0; i < n; i++)
		if (h->pairs[off + 2 * i] == name)
			return h->pairs[off + 2 * i + 1];
	return h->unalloc;
}

/* OpenCost's GenerateKey for the owner keys: the controller, or
 * "__unallocated__" when it has none (or, for deployment and the like,
 * is of another kind). */
static uint32_t owner_of(const struct gf_charge_input *in,
			 const struct gf_charge_record *r,
			 enum gf_charge_key_kind kind)
{
	const struct gf_charge_hash *h = in->extra_ix;
	const struct gf_charge_extra *x = &in->extra[r->extra];
	const struct gf__extra_parts *p = &h->parts[r->extra];
	/* by kind from GF_CHARGE_KEY_CONTROLLER_KIND on: the value, or
	 * the controller kind the key asks for */
	const uint32_t vals[] = {
		x->controller_kind, p->controller, p->service, 0, 0, 0
	};
	const uint32_t kinds[] = {
		0, 0, 0, h->deployment, h->statefulset, h->daemonset
	};
	size_t at = (size_t)(kind - GF_CHARGE_KEY_CONTROLLER_KIND);
	uint32_t v = vals[at], want = kinds[at];
	if (want)
		v = x->controller_kind == want ? x->controller : 0;
	return v ? v : h->unalloc;
}

uint32_t gf__charge_value(const struct gf_charge_input *in,
			  const struct gf_charge_record *r,
			  const struct gf_charge_key *k, uint32_t node_model)
{
	switch (k->kind) {
	case GF_CHARGE_KEY_CLUSTER:
		return r->cluster;
	case GF_CHARGE_KEY_NODE:
		return r->node;
	case GF_CHARGE_KEY_NAMESPACE:
		return r->ns;
	case GF_CHARGE_KEY_POD:
		return r->pod;
	case GF_CHARGE_KEY_CONTAINER:
		return r->container;
	case GF_CHARGE_KEY_LABEL:
		return pair_of(in->extra_ix,
			       in->extra_ix->parts[r->extra].pair_off,
			       in->extra_ix->parts[r->extra].npairs, k->label);
	case GF_CHARGE_KEY_ANNOTATION:
		return pair_of(in->extra_ix,
			       in->extra_ix->parts[r->extra].anno_off,
			       in->extra_ix->parts[r->extra].nannos, k->label);
	case GF_CHARGE_KEY_CONTROLLER_KIND:
	case GF_CHARGE_KEY_CONTROLLER:
	case GF_CHARGE_KEY_SERVICE:
	case GF_CHARGE_KEY_DEPLOYMENT:
	case GF_CHARGE_KEY_STATEFULSET:
	case GF_CHARGE_KEY_DAEMONSET:
		return owner_of(in, r, k->kind);
	case GF_CHARGE_KEY_GPU_MODEL:
		if (in->extra[r->extra].gpu_model)
			return in->extra[r->extra].gpu_model;
		return node_model ? node_model : in->extra_ix->unalloc;
	}
	return 0;
}

void gf__charge_where(const struct gf_charge_input *in, uint32_t src,
		      uint32_t line, char *out, size_t size)
{
	if (line)
		gf_note(out, size, "'%s':%u", gf_charge_str(in, src), line);
	else
		gf_note(out, size, "'%s'", gf_charge_str(in, src));
}

/* --- options and helpers ------------------------------------------------ */

void gf_charge_opts_init(struct gf_charge_opts *o, int64_t start_ms,
			 int64_t end_ms)
{
	memset(o, 0, sizeof(*o));
	o->start_ms = start_ms;
	o->end_ms = end_ms;
	o->share_split = GF_CHARGE_SPLIT_WEIGHTED;
	o->mig_rule = GF_CHARGE_MIG_COMPUTE;
}

int gf_charge_mig_units(const char *model, const char *profile, double count,
			enum gf_charge_mig_rule rule, double *units,
			struct gf_err *e)
{
	const struct gf_mig_model *m = gf_mig_model_by_id(model);
	if (!m)
		return gf_err_set(e, GF_ENOTFOUND,
				  "GPU model '%s' has no MIG profiles here "
				  "(known: A100, A30, H100, H200, GH200, B200)",
				  model);
	int p = gf_mig_profile_find(m, profile);
	if (p < 0)
		return gf_err_set(e, GF_ENOTFOUND,
				  "MIG profile '%s' does not exist on %s",
				  profile, m->name);
	const struct gf_mig_profile *pr = &m->profiles[p];
	if (rule == GF_CHARGE_MIG_MEMORY)
		*units = count * pr->mem / m->slices;
	else
		*units = count * pr->compute / m->compute;
	return 0;
}

static const char *const waste_names[GF_CHARGE_NWASTE] = {
	"allocated-idle", "data-starvation", "memory-overprovisioned"
};

const char *gf_charge_waste_name(enum gf_charge_waste w)
{
	return (unsigned)w < GF_CHARGE_NWASTE ? waste_names[w] : "?";
}

int gf_charge_waste_parse(const char *s)
{
	for (int i = 0; i < GF_CHARGE_NWASTE; i++)
		if (strcmp(s, waste_names[i]) == 0)
			return i;
	return -1;
}

const char *gf_charge_signal_name(enum gf_charge_signal s)
{
	static const char *const names[GF_CHARGE_NSIG] = {
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
		"DCGM_FI_DEV_GPU_UTIL"
	};
	return (unsigned)s < GF_CHARGE_NSIG ? names[s] : "?";
}

double gf_charge_round(double v)
{
	if (!isfinite(v))
		return v;
	double r = round(v * 1e5) / 1e5;
	return r == 0 ? 0 : r; /* no "-0" */
}

/* Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm). */
static void civil(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void gf_charge_time_str(int64_t ms, char *out, size_t size)
{
	int64_t s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
	int64_t days = s >= 0 ? s / 86400 : -((-s + 86399) / 86400);
	int64_t sod = s - days * 86400;
	int64_t y;
	unsigned m, d;
	civil(days, &y, &m, &d);
	gf_note(out, size, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m,
		d, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
}

double gf_charge_row_total(const struct gf_charge_row *r)
{
	return r->cpu_cost + r->gpu_cost + r->ram_cost + r->other_cost +
	       r->shared_cost;
}

double gf_charge_row_minutes(const struct gf_charge_row *r)
{
	return (double)(r->end_ms - r->start_ms) / 60000.0;
}

double gf_charge_row_idle(const struct gf_charge_row *r)
{
	if (r->kind == GF_CHARGE_ROW_IDLE)
		return r->cpu_cost + r->gpu_cost + r->ram_cost;
	return r->cpu_cost_idle + r->gpu_cost_idle + r->ram_cost_idle;
}

double gf_charge_row_waste(const struct gf_charge_row *r)
{
	double w = 0;
	for (int i = 0; i < GF_CHARGE_NWASTE; i++)
		w += r->waste[i];
	return w;
}

/* OpenCost's CPUEfficiency / RAMEfficiency: usage over request averages;
 * no request: 1 with usage and cost, else 0. */
static double eff(double req_min, double use_min, double cost)
{
	if (req_min > 0)
		return use_min / req_min;
	if (use_min == 0 || cost == 0)
		return 0;
	return 1;
}

double gf_charge_row_cpu_eff(const struct gf_charge_row *r)
{
	return eff(r->cpu_req_min, r->cpu_use_min, r->cpu_cost);
}

double gf_charge_row_ram_eff(const struct gf_charge_row *r)
{
	return eff(r->ram_req_min, r->ram_use_min, r->ram_cost);
}

double gf_charge_row_gpu_eff(const struct gf_charge_row *r)
{
	if (!(r->gpu_tele_hours > 0))
		return NAN;
	return r->gpu_active_hours / r->gpu_tele_hours;
}

double gf_charge_row_total_eff(const struct gf_charge_row *r)
{
	double c = r->cpu_cost, m = r->ram_cost;
	if (c + m > 0)
		return (gf_charge_row_cpu_eff(r) * c +
			gf_charge_row_ram_eff(r) * m) /
		       (c + m);
	return 0;
}

void gf__charge_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
	if (n < 2)
		return;
	uint64_t all_or = 0, all_and = ~0ULL;
	for (size_t i = 0; i < n; i++) {
		all_or |= a[i];
		all_and &= a[i];
	}
	uint64_t *src = a, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 11) {
		uint64_t mask = 0x7ffULL << shift;
		if ((all_or & mask) == (all_and & mask))
			continue; /* every key has the same digit here */
		size_t count[2048] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 0x7ff]++;
		size_t sum = 0;
		for (int d = 0; d < 2048; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0x7ff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}
