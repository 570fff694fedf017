/*
 * answers.c - the extender's verdicts and scores kept between calls, per
 * pod shape, each valid while its node's engine state is unchanged (and
 * a score while the engine's score generation is: answers.h says what
 * is kept and when it is dropped), and the names' indices of the last
 * list.
 *
 * A shape holds, per node index, the version and flags the node had when
 * it was found to fit and its score then (stamp: 8 bytes, the one row
 * a kept answer reads), or nothing, and how far it has read the
 * cluster's change log.  The tests test_answers_invalidated and
 * test_answers_differential of test_k8s_answers check a kept answer
 * dropped when a node changes between two pods of one shape, and every
 * verdict and score equal to those computed afresh over a random
 * sequence of changes and typical-mix refreshes; test_answers_log_overflow
 * more changes between two calls than the log keeps.
 */
#include "k8s/answers.h"

#include <string.h>

#include "util/mem.h"

struct stamp {
	uint32_t version; /* the node's when it was found to fit */
	uint8_t flags;
	uint8_t fits;  /* 0: nothing kept */
	int8_t score;  /* its score at the shape's score_gen; -1: none */
	uint8_t spare; /* (the row is 8 bytes) */
};

struct gf_k8s_shape {
	struct gf_k8s_answers *owner; /* for its counts */
	struct gf_k8s_ask a;
	bool used;
	uint64_t last; /* the answers' clock at its last use */
	struct stamp *s;
	int n;		    /* rows of s */
	uint64_t score_gen; /* gf_ctl_score_gen its kept scores are at */
	uint64_t seen;	    /* the cluster's nchanged its stamps are at */
	bool synced;	    /* seen is: else no stamp is trusted unread */
};

/* A list read in place (gf_k8s_args.own) and the indices of its names,
 * found when the core had nn nodes. */
struct list {
	char *text;
	size_t len;
	int n, nn;
	int *idx;
	uint64_t last; /* the answers' clock at its last use */
};

struct gf_k8s_answers {
	struct gf_k8s_shape shapes[GF_K8S_SHAPES];
	struct list lists[GF_K8S_LISTS];
	uint64_t clock;
	int *hint; /* the last list's indices, by position */
	int nhint;
	uint64_t hits, misses;
};

struct gf_k8s_answers *gf_k8s_answers_new(void)
{
	return gf_calloc(1, sizeof(struct gf_k8s_answers));
}

void gf_k8s_answers_clear(struct gf_k8s_answers *c)
{
	for (int k = 0; k < GF_K8S_SHAPES; k++) {
		gf_free(c->shapes[k].s);
		memset(&c->shapes[k], 0, sizeof(c->shapes[k]));
	}
	gf_free(c->hint);
	c->hint = NULL;
	c->nhint = 0;
	for (int k = 0; k < GF_K8S_LISTS; k++) {
		gf_free(c->lists[k].text);
		gf_free(c->lists[k].idx);
		memset(&c->lists[k], 0, sizeof(c->lists[k]));
	}
}

void gf_k8s_answers_free(struct gf_k8s_answers *c)
{
	if (!c)
		return;
	gf_k8s_answers_clear(c);
	gf_free(c);
}

void gf_k8s_answers_find(struct gf_k8s_answers *c, const struct gf_ctl *ctl,
			 const char *const *names, int n, int *idx)
{
	const struct gf_cluster *cl = gf_ctl_cluster(ctl);
	int nn = gf_ctl_nnodes(ctl);
	if (c->nhint < n) {
		c->hint = gf_reallocarray(c->hint, (size_t)n, sizeof(*c->hint));
		for (int k = c->nhint; k < n; k++)
			c->hint[k] = -1;
		c->nhint = n;
	}
	for (int k = 0; k < n; k++) {
		int h = c->hint[k];
		if (h >= 0 && h < nn && !strcmp(cl->names[h], names[k])) {
			idx[k] = h;
			continue;
		}
		idx[k] = gf_ctl_node_find(ctl, names[k]);
		c->hint[k] = idx[k];
	}
}

void gf_k8s_answers_find_args(struct gf_k8s_answers *c,
			      const struct gf_ctl *ctl,
			      const struct gf_k8s_args *a, int *idx)
{
	int nn = gf_ctl_nnodes(ctl);
	if (!a->own) {
		gf_k8s_answers_find(c, ctl, a->names, a->n, idx);
		return;
	}
	struct list *l = &c->lists[0];
	for (int k = 0; k < GF_K8S_LISTS; k++) {
		struct list *x = &c->lists[k];
		if (x->text && x->n == a->n && x->nn == nn &&
		    x->len == a->own_len && !memcmp(x->text, a->own, x->len)) {
			memcpy(idx, x->idx, (size_t)a->n * sizeof(*idx));
			x->last = ++c->clock;
			return;
		}
		if (x->last < l->last)
			l = x;
	}
	gf_k8s_answers_find(c, ctl, a->names, a->n, idx);
	/* kept in the least recently used place */
	l->text = gf_reallocarray(l->text, a->own_len + 1, 1);
	memcpy(l->text, a->own, a->own_len);
	l->idx = gf_reallocarray(l->idx, (size_t)a->n + 1, sizeof(*l->idx));
	memcpy(l->idx, idx, (size_t)a->n * sizeof(*idx));
	l->len = a->own_len;
	l->n = a->n;
	l->nn = nn;
	l->last = ++c->clock;
}

/* Kept: whole GPUs or a share, on any model, any node's labels. */
static bool keepable(const struct gf_k8s_ask *a)
{
	return (a->kind == GF_K8S_ASK_WHOLE || a->kind == GF_K8S_ASK_SHARE) &&
	       !a->constrained;
}

/* The shape's kept scores dropped when the engine's scores moved
 * without any node changing (the typical mix refreshed, FGD+'s
 * settings): gf_ctl_score_gen. */
static void scores_sync(struct gf_k8s_shape *sh, const struct gf_ctl *ctl)
{
	uint64_t gen = gf_ctl_score_gen(ctl);
	if (sh->score_gen == gen)
		return;
	for (int i = 0; i < sh->n; i++)
		sh->s[i].score = -1;
	sh->score_gen = gen;
}

/* Is node n's kept "fits" in st current?  Its version and flags are
 * those it was found to fit with.  Ready and not cordoned need no read
 * of their own: the core keeps GF_CNODE_CORDONED in the engine's flags
 * set exactly while a node is not ready, cordoned or drained
 * (gf_ctl_check: "cordoned in the engine iff not ready or cordoned"),
 * a node that fitted had it clear, and equal flags say it still is. */
static inline bool kept(const struct stamp *st, const struct gf_cnode *n)
{
	return st->fits && st->version == n->version && st->flags == n->flags;
}

/* The shape's stamps brought to the cluster's change log: the nodes
 * changed since it was last read dropped (their stamps computed anew
 * when asked); past what the log keeps (or never read), every stamp
 * checked against its node's version and flags instead.  After it,
 * every stamp that says "fits" is current until the next change. */
static void log_sync(struct gf_k8s_shape *sh, const struct gf_ctl *ctl)
{
	const struct gf_cluster *cl = gf_ctl_cluster(ctl);
	uint64_t d = cl->nchanged - sh->seen;
	if (!sh->synced || d > GF_CLUSTER_LOG) {
		int nn = gf_ctl_nnodes(ctl);
		for (int i = 0; i < sh->n && i < nn; i++)
			if (sh->s[i].fits && !kept(&sh->s[i], &cl->nodes[i]))
				sh->s[i].fits = 0;
	} else {
		for (uint64_t k = sh->seen; k < cl->nchanged; k++) {
			int32_t i = cl->changed[k % GF_CLUSTER_LOG];
			if (i >= 0 && i < sh->n)
				sh->s[i].fits = 0;
		}
	}
	sh->seen = cl->nchanged;
	sh->synced = true;
}

struct gf_k8s_shape *gf_k8s_answers_shape(struct gf_k8s_answers *c,
					  const struct gf_ctl *ctl,
					  const struct gf_k8s_ask *a)
{
	if (!c || !keepable(a))
		return NULL;
	struct gf_k8s_shape *sh = NULL, *old = &c->shapes[0];
	for (int k = 0; k < GF_K8S_SHAPES && !sh; k++) {
		struct gf_k8s_shape *x = &c->shapes[k];
		if (x->used && !memcmp(&x->a, a, sizeof(*a)))
			sh = x;
		else if (!x->used || (old->used && x->last < old->last))
			old = x;
	}
	if (!sh) { /* a new shape in the least recently used place */
		sh = old;
		gf_free(sh->s);
		memset(sh, 0, sizeof(*sh));
		sh->a = *a; /* gf_k8s_ask_of zeroes it whole: memcmp is exact */
		sh->used = true;
	}
	sh->owner = c;
	int n = gf_ctl_nnodes(ctl);
	if (sh->n < n) { /* nodes added: their rows keep nothing */
		sh->s = gf_reallocarray(sh->s, (size_t)n, sizeof(*sh->s));
		memset(sh->s + sh->n, 0, (size_t)(n - sh->n) * sizeof(*sh->s));
		for (int i = sh->n; i < n; i++)
			sh->s[i].score = -1;
		sh->n = n;
	}
	scores_sync(sh, ctl);
	log_sync(sh, ctl);
	sh->last = ++c->clock;
	return sh;
}

/* Node i's verdict computed (a miss) and its stamp made anew. */
static void verdict_anew(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			 int i, struct gf_k8s_memo *m, struct gf_k8s_verdict *v)
{
	const struct gf_cnode *n = &gf_ctl_cluster(ctl)->nodes[i];
	struct stamp *st = &sh->s[i];
	sh->owner->misses++;
	gf_k8s_verdict(ctl, i, m, v);
	st->fits = v->kind == GF_K8S_FITS;
	st->version = n->version;
	st->flags = n->flags;
	st->score = -1;
}

void gf_k8s_answers_verdict(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			    int i, struct gf_k8s_memo *m,
			    struct gf_k8s_verdict *v)
{
	if (!sh || i < 0 || i >= sh->n || i >= gf_ctl_nnodes(ctl)) {
		gf_k8s_verdict(ctl, i, m, v);
		return;
	}
	if (kept(&sh->s[i], &gf_ctl_cluster(ctl)->nodes[i])) {
		v->kind = GF_K8S_FITS;
		v->why[0] = '\0';
		sh->owner->hits++;
		return;
	}
	verdict_anew(sh, ctl, i, m, v);
}

int gf_k8s_answers_score(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			 int i, struct gf_k8s_memo *m,
			 const struct gf_k8s_verdict *v)
{
	if (!sh || v->kind != GF_K8S_FITS || i < 0 || i >= sh->n ||
	    i >= gf_ctl_nnodes(ctl) || sh->score_gen != gf_ctl_score_gen(ctl))
		return gf_k8s_score_of(ctl, i, m, v);
	struct stamp *st = &sh->s[i];
	if (!kept(st, &gf_ctl_cluster(ctl)->nodes[i]))
		return gf_k8s_score_of(ctl, i, m, v); /* not this verdict's */
	if (st->score < 0)
		st->score = (int8_t)gf_k8s_score_of(ctl, i, m, v);
	return st->score;
}

void gf_k8s_answers_all(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			const int *idx, int count, struct gf_k8s_memo *m,
			struct gf_k8s_verdict *v, int64_t *score)
{
	if (sh) {
		scores_sync(sh, ctl);
		log_sync(sh, ctl);
	}
	int nn = gf_ctl_nnodes(ctl);
	nn = sh && sh->n < nn ? sh->n : nn;
	uint64_t hits = 0;
	for (int k = 0; k < count; k++) {
		int i = idx[k];
		struct stamp *st = sh && i >= 0 && i < nn ? &sh->s[i] : NULL;
		/* synced: a stamp that says "fits" is current, unread */
		if (st && st->fits && (!score || st->score >= 0)) {
			hits++; /* the common case: all kept */
			if (v) {
				v[k].kind = GF_K8S_FITS;
				v[k].why[0] = '\0';
			}
			if (score)
				score[k] = st->score;
			continue;
		}
		struct gf_k8s_verdict one = { 0 }; /* a miss: rare */
		struct gf_k8s_verdict *x = v ? &v[k] : &one;
		gf_k8s_answers_verdict(st ? sh : NULL, ctl, i, m, x);
		if (score)
			score[k] = gf_k8s_answers_score(st ? sh : NULL, ctl, i,
							m, x);
	}
	if (sh)
		sh->owner->hits += hits;
}

void gf_k8s_answers_counts(const struct gf_k8s_answers *c, uint64_t *hits,
			   uint64_t *misses)
{
	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
}
