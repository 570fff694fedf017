/*
 * decide.c - the extender's decisions against the scheduling core: a
 * verdict and a score per node, the fewest victims, the job a bound pod
 * becomes.  Read-only (decide.h); every answer is what the engine would
 * do on that node now.
 *
 * Speed: kube-scheduler asks about up to every node for every pod (5,000
 * names in a call), and its own budget is about 1.4 ms a pod at 700
 * pods/s.  Nodes alike answer alike, so a call's memo keeps the best
 * linked set per (topology, free GPUs), the linking a topology allows
 * per size, and the policy's score per node state (the node's fields
 * but its version and rank: every policy reads only those and the
 * node's fragmentation, itself a function of them).  A memo changes no
 * answer.
 */
#include "k8s/decide.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/catalog.h>
#include <gpufleet/gpu_topo.h>

#include "util/buf.h"
#include "util/fmt.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/mem.h"

#define SETS_CAP 4096 /* (topology, free mask) answers per call */
#define TOPO_REQ 32   /* (topology, size) requirements per call */

struct set_slot {
	uint32_t mask;
	uint16_t topo;
	int8_t min_pair, pad;
	int sum;
};

struct topo_req {
	uint16_t topo;
	int min_class; /* the link class the best set of k has, empty */
	int best_sum;
};

/* A node state's score, row of the memo's states index. */
struct score_row {
	int rep; /* a node with this state */
	int score;
};

struct gf_k8s_memo {
	const struct gf_ctl *ctl;
	struct gf_k8s_ask a;
	struct topo_req tr[TOPO_REQ];
	int ntr;
	struct set_slot *sets; /* SETS_CAP rows, made on first use */
	struct gf_hmap set_index;
	uint32_t nsets;
	struct gf_hmap states; /* node states to rows */
	struct score_row *rows;
	uint32_t nrows, rcap;
};

/* ---- the ask ---------------------------------------------------------- */

/* Do a and b name one GPU model: the same text once normalised
 * (gf_k8s_product_norm: case, ' ' and '_', GFD's "-MIG-..." and
 * "-SHARED" suffixes aside), or one catalog model by any of its names
 * (id, alias, NVML name, GFD product: gf_catalog_same)? */
static bool names_model(const char *a, const char *b)
{
	char x[GF_K8S_VALUE_MAX * 2], y[GF_K8S_VALUE_MAX * 2];
	gf_k8s_product_norm(a, x, sizeof(x));
	gf_k8s_product_norm(b, y, sizeof(y));
	return x[0] && (!strcmp(x, y) || gf_catalog_same(x, y));
}

static int ask_kind(const struct gf_k8s_pod *p, struct gf_k8s_ask *a,
		    struct gf_err *e)
{
	int kinds = (p->gpus > 0) + (p->gpu_milli > 0) + (p->nmig > 0);
	if (kinds > 1)
		return gf_err_set(e, GF_EINVAL,
				  "gpufleet: pod %s/%s asks for %s%s%s: "
				  "gpufleet places one kind per pod",
				  p->ns, p->name,
				  p->gpus > 0 ? GF_K8S_RES_GPU " " : "",
				  p->gpu_milli > 0 ? GF_K8S_RES_MILLI " " : "",
				  p->nmig > 0 ? "nvidia.com/mig-*" : "");
	if (p->nmig > 1 || p->mig_count > 1)
		return gf_err_set(
			e, GF_EINVAL,
			"gpufleet: pod %s/%s asks for %lld MIG "
			"instances: gpufleet places one per pod",
			p->ns, p->name,
			(long long)(p->nmig > 1 ? p->nmig : p->mig_count));
	if (p->gpus > GF_CNODE_MAX_GPUS)
		return gf_err_set(e, GF_EINVAL,
				  "gpufleet: pod %s/%s asks for %lld GPUs: at "
				  "most %d on one node",
				  p->ns, p->name, (long long)p->gpus,
				  GF_CNODE_MAX_GPUS);
	if (p->gpu_milli > GF_GPU_MILLI)
		return gf_err_set(e, GF_EINVAL,
				  "gpufleet: pod %s/%s: " GF_K8S_RES_MILLI
				  " %lld: expected 1 to 1000 (a share of one "
				  "GPU)",
				  p->ns, p->name, (long long)p->gpu_milli);
	if (p->gpus > 0) {
		a->kind = GF_K8S_ASK_WHOLE;
		a->req.ngpus = (uint16_t)p->gpus;
		a->req.gpu_milli = GF_GPU_MILLI;
	} else if (p->gpu_milli > 0) {
		a->kind = GF_K8S_ASK_SHARE;
		a->req.ngpus = 1;
		a->req.gpu_milli = (int16_t)p->gpu_milli;
	} else if (p->nmig > 0) {
		a->kind = GF_K8S_ASK_MIG;
		_Static_assert(sizeof(a->profile) == sizeof(p->mig_profile),
			       "a profile copied whole");
		memcpy(a->profile, p->mig_profile, sizeof(a->profile));
	}
	return 0;
}

int gf_k8s_ask_of(const struct gf_ctl *ctl, const struct gf_k8s_pod *p,
		  struct gf_k8s_ask *a, struct gf_err *e)
{
	memset(a, 0, sizeof(*a));
	int rc = ask_kind(p, a, e);
	if (rc || a->kind == GF_K8S_ASK_NONE)
		return rc;
	a->req.cpu =
		p->cpu_milli > INT32_MAX ? INT32_MAX : (int32_t)p->cpu_milli;
	a->req.mem = p->memory_mib;
	a->any_topology = p->any_topology;
	a->constrained = p->nmodels > 0;
	const struct gf_cluster *c = gf_ctl_cluster(ctl);
	for (int m = 0; a->constrained && m < c->nmodels; m++)
		for (int k = 0; k < p->nmodels; k++)
			if (names_model(p->models[k], c->models[m]))
				a->models |= UINT32_C(1) << m;
	a->req.spec = a->models;
	memcpy(a->named, p->models, sizeof(a->named));
	a->nnamed = p->nmodels;
	struct gf_buf b; /* sized for every model: no append fails */
	gf_buf_init(&b, GF_K8S_MODELS * (GF_K8S_VALUE_MAX + 4) + 1);
	for (int k = 0; k < p->nmodels; k++)
		gf_buf_printf(&b, "%s%s", k ? " or " : "", p->models[k]);
	gf_note(a->want, sizeof(a->want), "%s", gf_buf_str(&b));
	gf_buf_release(&b);
	return 0;
}

/* ---- the memo ----------------------------------------------------------- */

struct gf_k8s_memo *gf_k8s_memo_new(const struct gf_ctl *ctl,
				    const struct gf_k8s_ask *a, int nodes)
{
	struct gf_k8s_memo *m = gf_calloc(1, sizeof(*m));
	m->ctl = ctl;
	m->a = *a;
	(void)nodes; /* the index grows as states come */
	gf_hmap_init(&m->set_index);
	gf_hmap_init(&m->states);
	return m;
}

void gf_k8s_memo_free(struct gf_k8s_memo *m)
{
	if (!m)
		return;
	gf_free(m->sets);
	gf_hmap_release(&m->set_index);
	gf_hmap_release(&m->states);
	gf_free(m->rows);
	gf_free(m);
}

/* The best set of k among mask on topology topo (1-based): its weakest
 * pair and sum; min_pair -1 when fewer than k are free. */
struct set_probe {
	uint16_t topo;
	uint32_t mask;
	const struct gf_k8s_memo *m;
};

static bool same_set(const void *probe, uint32_t row)
{
	const struct set_probe *p = probe;
	const struct set_slot *s = &p->m->sets[row];
	return s->topo == p->topo && s->mask == p->mask;
}

static struct set_slot best_set(struct gf_k8s_memo *m, uint16_t topo,
				uint32_t mask, int k)
{
	struct set_probe p = { .topo = topo, .mask = mask, .m = m };
	uint64_t h = gf_hash_mix(topo, mask);
	int64_t row = gf_hmap_get(&m->set_index, h, same_set, &p);
	if (row >= 0)
		return m->sets[row];
	const struct gf_gpu_topo *t = &gf_ctl_cluster(m->ctl)->topos[topo - 1];
	int g[GF_CNODE_MAX_GPUS];
	struct gf_gpu_set_score sc = { .min_pair = -1 };
	if (gf_gpu_topo_choose(t, mask, k, false, g) == 0)
		gf_gpu_topo_score(t, g, k, &sc);
	struct set_slot s = { .mask = mask,
			      .topo = topo,
			      .min_pair = (int8_t)sc.min_pair,
			      .sum = sc.sum_pair };
	if (!m->sets)
		m->sets = gf_calloc(SETS_CAP, sizeof(*m->sets));
	if (m->nsets < SETS_CAP) { /* else computed, not kept */
		m->sets[m->nsets] = s;
		if (gf_hmap_put(&m->set_index, h, m->nsets) == 0)
			m->nsets++;
	}
	return s;
}

/* What a topology allows for k GPUs: the class of its best set on the
 * empty node (NVLink of any count, else the PCIe class). */
static const struct topo_req *topo_req(struct gf_k8s_memo *m, uint16_t topo,
				       int k)
{
	for (int i = 0; i < m->ntr; i++)
		if (m->tr[i].topo == topo)
			return &m->tr[i];
	const struct gf_gpu_topo *t = &gf_ctl_cluster(m->ctl)->topos[topo - 1];
	uint32_t all =
		t->ngpus >= 32 ? UINT32_MAX : (UINT32_C(1) << t->ngpus) - 1;
	struct set_slot s = best_set(m, topo, all, k);
	/* past the table's room the last entry is reused */
	struct topo_req *r =
		&m->tr[m->ntr < TOPO_REQ ? m->ntr++ : TOPO_REQ - 1];
	r->topo = topo;
	r->min_class = s.min_pair >= GF_GQ_NVLINK ? GF_GQ_NVLINK : s.min_pair;
	r->best_sum = s.sum;
	return r;
}

/* ---- verdicts ----------------------------------------------------------- */

static const char *class_name(int q)
{
	static const char *const names[] = { "none", "SYS", "NODE",
					     "PHB",  "PXB", "PIX" };
	return q >= GF_GQ_NVLINK	  ? "NVLink"
	       : q >= 0 && q <= GF_GQ_PIX ? names[q]
					  : "?";
}

static enum gf_k8s_kind say(struct gf_k8s_verdict *v, enum gf_k8s_kind kind,
			    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum gf_k8s_kind say(struct gf_k8s_verdict *v, enum gf_k8s_kind kind,
			    const char *fmt, ...)
{
	v->kind = kind;
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
	return kind;
}

/* Whole GPUs on a node with a known, non-uniform topology. */
static enum gf_k8s_kind linked(struct gf_k8s_memo *m, const struct gf_cnode *n,
			       struct gf_k8s_verdict *v)
{
	int k = m->a.req.ngpus;
	const struct gf_cluster *c = gf_ctl_cluster(m->ctl);
	if (k < 2 || m->a.any_topology || n->topo == 0 || n->topo > c->ntopos ||
	    c->topos[n->topo - 1].uniform)
		return GF_K8S_FITS;
	const struct topo_req *r = topo_req(m, n->topo, k);
	struct set_slot s = best_set(m, n->topo, gf_cnode_free_mask(n), k);
	if (s.min_pair >= r->min_class)
		return GF_K8S_FITS;
	if (r->min_class >= GF_GQ_NVLINK)
		return say(v, GF_K8S_NO_ROOM,
			   "gpufleet: %d free GPUs but no %d NVLink-connected",
			   n->nfree, k);
	return say(v, GF_K8S_NO_ROOM,
		   "gpufleet: %d free GPUs but no %d linked by %s or better",
		   n->nfree, k, class_name(r->min_class));
}

/* Does the node's own product label (if it has one) say no? */
static bool label_refuses(const struct gf_k8s_memo *m, int i)
{
	const struct gf_ctl_node *x = gf_ctl_node(m->ctl, i);
	const char *l = x ? strstr(x->labels, GF_K8S_LABEL_PRODUCT "=") : NULL;
	if (!l || (l != x->labels && l[-1] != ','))
		return false;
	char v[GF_K8S_VALUE_MAX];
	l += strlen(GF_K8S_LABEL_PRODUCT "=");
	size_t n = strcspn(l, ",");
	if (gf_fmt(v, sizeof(v), "%.*s", (int)n, l))
		v[0] = '\0'; /* longer than any model we know: matches none */
	for (int k = 0; k < m->a.nnamed; k++)
		if (names_model(m->a.named[k], v))
			return false;
	return true;
}

/* The ask on node n (the core's node or a copy), mig_offered / mig_free
 * instances of its profile there. */
static enum gf_k8s_kind fit_on(struct gf_k8s_memo *m, const struct gf_cnode *n,
			       int offered, int mig_free,
			       struct gf_k8s_verdict *v)
{
	const struct gf_k8s_ask *a = &m->a;
	const struct gf_cluster *c = gf_ctl_cluster(m->ctl);
	if (n->ngpus == 0)
		return say(v, GF_K8S_NEVER, "gpufleet: node has no GPUs");
	if (a->constrained && !(a->models >> n->model & 1))
		return say(v, GF_K8S_NEVER,
			   "gpufleet: node's GPUs are %s, the pod asks for %s",
			   c->models[n->model], a->want);
	if (a->kind == GF_K8S_ASK_MIG) {
		if (offered == 0)
			return say(v, GF_K8S_NEVER,
				   "gpufleet: no %s instance on this node",
				   a->profile);
		if (mig_free < 1)
			return say(v, GF_K8S_NO_ROOM,
				   "gpufleet: no %s instance free (%d in use "
				   "or on unhealthy GPUs)",
				   a->profile, offered);
	} else if (a->kind == GF_K8S_ASK_WHOLE) {
		int k = a->req.ngpus;
		if (n->ngpus < k)
			return say(v, GF_K8S_NEVER,
				   "gpufleet: node has %d GPUs, the pod asks "
				   "for %d",
				   n->ngpus, k);
		if (n->nfree < k)
			return say(v, GF_K8S_NO_ROOM,
				   "gpufleet: %d free GPUs, the pod needs %d",
				   n->nfree, k);
		if (linked(m, n, v) != GF_K8S_FITS)
			return v->kind;
	} else if (n->max_left < a->req.gpu_milli) {
		return say(v, GF_K8S_NO_ROOM,
			   "gpufleet: no GPU with %d milli-GPU free (most "
			   "free: %d)",
			   a->req.gpu_milli, n->max_left);
	}
	if (n->cpu_left < a->req.cpu)
		return say(v, GF_K8S_NO_ROOM,
			   "gpufleet: %d milli-CPU free, the pod needs %d",
			   n->cpu_left, a->req.cpu);
	if (n->mem_left < a->req.mem)
		return say(v, GF_K8S_NO_ROOM,
			   "gpufleet: %lld MiB free, the pod needs %lld",
			   (long long)n->mem_left, (long long)a->req.mem);
	v->kind = GF_K8S_FITS;
	v->why[0] = '\0';
	return GF_K8S_FITS;
}

void gf_k8s_verdict(const struct gf_ctl *ctl, int i, struct gf_k8s_memo *m,
		    struct gf_k8s_verdict *v)
{
	if (i < 0 || i >= gf_ctl_nnodes(ctl)) {
		say(v, GF_K8S_NEVER,
		    "gpufleet: unknown node (not one of its "
		    "nodes)");
		return;
	}
	if (!gf_ctl_node_is_ready(ctl, i) || gf_ctl_node_is_cordoned(ctl, i) ||
	    (gf_ctl_cluster(ctl)->nodes[i].flags & GF_CNODE_CORDONED)) {
		const char *r = gf_ctl_node_reason(ctl, i);
		say(v, GF_K8S_NEVER, "gpufleet: node not ready%s%.100s",
		    r[0] ? ": " : "", r);
		return;
	}
	if (m->a.constrained && label_refuses(m, i)) {
		say(v, GF_K8S_NEVER,
		    "gpufleet: node's " GF_K8S_LABEL_PRODUCT " is not %.100s",
		    m->a.want);
		return;
	}
	int offered = 0, mig_free = 0;
	if (m->a.kind == GF_K8S_ASK_MIG)
		offered =
			gf_ctl_mig_count(ctl, i, m->a.profile, &mig_free, NULL);
	fit_on(m, &gf_ctl_cluster(ctl)->nodes[i], offered, mig_free, v);
}

/* ---- scores ----------------------------------------------------------- */

/* Node n's state as the policies read it: n but its version and rank. */
static void state_key(const struct gf_cnode *n, struct gf_cnode *key)
{
	memcpy(key, n, sizeof(*key));
	key->version = 0;
	key->rank = 0;
}

/* A hash of a state, a word at a time through gf_hash_mix (a node is
 * about 120 bytes and kube-scheduler sends 5,000 of them a call). */
static uint64_t state_hash(const struct gf_cnode *key)
{
	const unsigned char *b = (const unsigned char *)key;
	uint64_t h = sizeof(*key), w = 0;
	size_t k = 0;
	for (; k + sizeof(w) <= sizeof(*key); k += sizeof(w)) {
		memcpy(&w, b + k, sizeof(w));
		h = gf_hash_mix(h, w);
	}
	if (k < sizeof(*key)) {
		w = 0;
		memcpy(&w, b + k, sizeof(*key) - k);
		h = gf_hash_mix(h, w);
	}
	return h;
}

/* A state looked up: its key and the memo whose rows it is read against. */
struct state_probe {
	struct gf_cnode key;
	const struct gf_k8s_memo *m;
};

static bool same_state(const void *probe, uint32_t row)
{
	const struct state_probe *p = probe;
	struct gf_cnode other;
	state_key(&gf_ctl_cluster(p->m->ctl)->nodes[p->m->rows[row].rep],
		  &other);
	return memcmp(&p->key, &other, sizeof(other)) == 0;
}

/* The policy's score of node i, 0..100, through the memo: a state seen
 * before in this call gives the score its first node had (the policies
 * read only the state; the test "memo's scores" checks each against
 * gf_ctl_score). */
static int policy_score(struct gf_k8s_memo *m, int i)
{
	struct state_probe p = { .m = m };
	state_key(&gf_ctl_cluster(m->ctl)->nodes[i], &p.key);
	uint64_t h = state_hash(&p.key);
	int64_t row = gf_hmap_get(&m->states, h, same_state, &p);
	if (row >= 0)
		return m->rows[row].score;
	int gpu, score = gf_ctl_score(m->ctl, i, &m->a.req, &gpu);
	if (m->nrows == m->rcap) {
		m->rcap = m->rcap ? 2 * m->rcap : 64;
		m->rows = gf_reallocarray(m->rows, m->rcap, sizeof(*m->rows));
	}
	m->rows[m->nrows] = (struct score_row){ .rep = i, .score = score };
	if (gf_hmap_put(&m->states, h, m->nrows) == 0)
		m->nrows++; /* else past GF_HMAP_MAX: scored, not kept */
	return score;
}

int gf_k8s_score(const struct gf_ctl *ctl, int i, struct gf_k8s_memo *m)
{
	struct gf_k8s_verdict v;
	gf_k8s_verdict(ctl, i, m, &v);
	return gf_k8s_score_of(ctl, i, m, &v);
}

int gf_k8s_score_of(const struct gf_ctl *ctl, int i, struct gf_k8s_memo *m,
		    const struct gf_k8s_verdict *v)
{
	if (v->kind != GF_K8S_FITS)
		return 0;
	if (m->a.kind == GF_K8S_ASK_MIG) {
		int free, offered = gf_ctl_mig_count(ctl, i, m->a.profile,
						     &free, NULL);
		return (10 * (offered - free + 1) + offered / 2) / offered;
	}
	int s = policy_score(m, i);
	const struct gf_cnode *n = &gf_ctl_cluster(ctl)->nodes[i];
	const struct gf_cluster *c = gf_ctl_cluster(ctl);
	int k = m->a.req.ngpus;
	if (m->a.kind == GF_K8S_ASK_WHOLE && k > 1 && n->topo > 0 &&
	    n->topo <= c->ntopos && !c->topos[n->topo - 1].uniform) {
		const struct topo_req *r = topo_req(m, n->topo, k);
		struct set_slot set =
			best_set(m, n->topo, gf_cnode_free_mask(n), k);
		int t = r->best_sum > 0 ? 100 * set.sum / r->best_sum : 100;
		s = (s + (t > 100 ? 100 : t)) / 2;
	}
	s = (s + 5) / 10;
	return s < 0 ? 0 : s > 10 ? 10 : s;
}

/* ---- victims ---------------------------------------------------------- */

struct fit_arg {
	struct gf_k8s_memo *m;
	int offered;
};

static bool fits_copy(void *arg, const struct gf_cnode *n, int mig_free)
{
	struct fit_arg *f = arg;
	struct gf_k8s_verdict v;
	return fit_on(f->m, n, f->offered, mig_free, &v) == GF_K8S_FITS;
}

int gf_k8s_victims(struct gf_ctl *ctl, int i, struct gf_k8s_memo *m,
		   const char *const *uids, int n,
		   const char *(*job_of)(void *arg, const char *uid), void *arg,
		   int *out)
{
	const char **ids = gf_calloc((size_t)n + 1, sizeof(*ids));
	int *pos = gf_calloc((size_t)n + 1, sizeof(*pos));
	int *got = gf_calloc((size_t)n + 1, sizeof(*got));
	int nid = 0;
	for (int k = 0; k < n; k++) {
		const char *id = job_of(arg, uids[k]);
		if (id) {
			pos[nid] = k;
			ids[nid++] = id;
		}
	}
	struct gf_job_spec spec = { .replicas = 1 };
	const struct gf_k8s_ask *a = &m->a;
	spec.cpu_milli = a->req.cpu;
	spec.memory_mib = a->req.mem;
	if (a->kind == GF_K8S_ASK_WHOLE)
		spec.gpus = a->req.ngpus;
	else if (a->kind == GF_K8S_ASK_SHARE)
		spec.gpu_milli = a->req.gpu_milli;
	else
		memcpy(spec.mig_profile, a->profile, sizeof(spec.mig_profile));
	_Static_assert(sizeof(spec.mig_profile) == sizeof(a->profile),
		       "a profile copied whole");
	struct fit_arg f = { .m = m };
	int free;
	if (a->kind == GF_K8S_ASK_MIG)
		f.offered = gf_ctl_mig_count(ctl, i, a->profile, &free, NULL);
	int rc = gf_ctl_victims(ctl, &spec, i, ids, nid, fits_copy, &f, got);
	for (int k = 0; k < rc; k++)
		out[k] = pos[got[k]];
	gf_free(ids);
	gf_free(pos);
	gf_free(got);
	return rc;
}

/* ---- the job of a pod ----------------------------------------------- */

/* s into out (size bytes), or its head and a hash when too long (the
 * head sized so that it fits: gf_note never cuts it). */
static void shorten(const char *s, char *out, size_t size)
{
	if (gf_fmt(out, size, "%s", s) == 0)
		return;
	gf_note(out, size, "%.*s-%08x", (int)(size - 10), s,
		(unsigned)(gf_hash_str(s) & 0xffffffffu));
}

struct gf_job *gf_k8s_job_new(const struct gf_ctl *ctl,
			      const struct gf_k8s_pod *p,
			      const struct gf_k8s_ask *a, int i, uint64_t seq,
			      const char *cls, int64_t now_ms)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	struct gf_job_spec *s = &j->spec;
	j->seq = seq;
	/* each sized for what it holds (the pod's fields are bounded where
	 * they are read): a cut would be a bug, said in the log */
	char full[GF_K8S_NS_MAX + GF_K8S_NAME_MAX + 2];
	int cut =
		gf_fmt(j->id, sizeof(j->id), "j%llu", (unsigned long long)seq);
	cut |= gf_fmt(full, sizeof(full), "%s/%s", p->ns, p->name);
	shorten(full, s->name, sizeof(s->name));
	shorten(p->ns, s->team, sizeof(s->team));
	cut |= gf_fmt(s->class_name, sizeof(s->class_name), "%s", cls);
	s->replicas = 1;
	if (a->kind == GF_K8S_ASK_WHOLE)
		s->gpus = a->req.ngpus;
	else if (a->kind == GF_K8S_ASK_SHARE)
		s->gpu_milli = a->req.gpu_milli;
	else if (a->kind == GF_K8S_ASK_MIG)
		memcpy(s->mig_profile, a->profile, sizeof(s->mig_profile));
	const struct gf_cluster *c = gf_ctl_cluster(ctl);
	if (a->constrained && i >= 0 && i < c->n)
		cut |= gf_fmt(s->gpu_model, sizeof(s->gpu_model), "%s",
			      c->models[c->nodes[i].model]);
	if (cut)
		gf_log(GF_LOG_WARN, "k8s",
		       "pod %s: its job's id, class or "
		       "model was cut",
		       full);
	s->cpu_milli = a->req.cpu > GF_JOB_CPU_MILLI_MAX ? GF_JOB_CPU_MILLI_MAX
							 : a->req.cpu;
	s->memory_mib = a->req.mem > GF_JOB_MEMORY_MIB_MAX
				? GF_JOB_MEMORY_MIB_MAX
				: a->req.mem;
	s->max_runtime_s = GF_JOB_RUNTIME_MAX_S;
	size_t len = strlen(p->uid) + strlen(full) + 16;
	s->command = gf_malloc(len);
	/* len is what the command needs and more: it cannot be cut */
	(void)!gf_fmt(s->command, len, GF_JOB_K8S_COMMAND "%s %s", p->uid,
		      full);
	s->origin = GF_JOB_ORIGIN_K8S;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = now_ms;
	j->block = -1;
	return j;
}

bool gf_k8s_job_uid(const struct gf_job *j, char *out, size_t size)
{
	const char *c = j->spec.command;
	if (!c || strncmp(c, "k8s-pod ", 8) != 0)
		return false;
	c += 8;
	size_t n = strcspn(c, " ");
	if (n == 0 || n >= size)
		return false;
	memcpy(out, c, n);
	out[n] = '\0';
	return true;
}

void gf_k8s_keep_best(struct gf_k8s_verdict *v, const int64_t *score, int n,
		      int best)
{
	if (best <= 0)
		return;
	int *top = gf_malloc((size_t)best * sizeof(*top)), k = 0;
	for (int i = 0; i < n; i++) {
		if (v[i].kind != GF_K8S_FITS)
			continue;
		if (k == best && score[i] <= score[top[k - 1]]) {
			v[i].kind = GF_K8S_BEHIND;
			continue;
		}
		if (k == best) /* the last of the best goes behind */
			v[top[--k]].kind = GF_K8S_BEHIND;
		int at = k++;
		while (at > 0 && score[top[at - 1]] < score[i]) {
			top[at] = top[at - 1];
			at--;
		}
		top[at] = i;
	}
	gf_free(top);
}
