/*
 * answers.c - the extender's verdicts kept between calls, per pod shape,
 * each valid while its node's engine state is unchanged (answers.h says
 * what is kept and when it is dropped), and the names' indices of the
 * last list.
 *
 * A shape holds, per node index, the version and flags the node had when
 * it was found to fit (stamp), or nothing.  The test "answers" of
 * test_k8s checks a kept answer dropped when a node changes between two
 * pods of one shape, and every answer equal to gf_k8s_verdict's over a
 * random sequence of changes.
 */
#include "k8s/answers.h"

#include <string.h>

#include "util/mem.h"

struct stamp {
	uint32_t version; /* the node's when it was found to fit */
	uint8_t flags;
	uint8_t fits; /* 0: nothing kept */
};

struct gf_k8s_shape {
	struct gf_k8s_answers *owner; /* for its counts */
	struct gf_k8s_ask a;
	bool used;
	uint64_t last; /* the answers' clock at its last use */
	struct stamp *s;
	int n; /* rows of s */
};

struct gf_k8s_answers {
	struct gf_k8s_shape shapes[GF_K8S_SHAPES];
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

/* Kept: whole GPUs or a share, on any model, any node's labels. */
static bool keepable(const struct gf_k8s_ask *a)
{
	return (a->kind == GF_K8S_ASK_WHOLE || a->kind == GF_K8S_ASK_SHARE) &&
	       !a->constrained;
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
		sh->n = n;
	}
	sh->last = ++c->clock;
	return sh;
}

void gf_k8s_answers_verdict(struct gf_k8s_shape *sh, const struct gf_ctl *ctl,
			    int i, struct gf_k8s_memo *m,
			    struct gf_k8s_verdict *v)
{
	if (!sh || i < 0 || i >= sh->n || i >= gf_ctl_nnodes(ctl)) {
		gf_k8s_verdict(ctl, i, m, v);
		return;
	}
	const struct gf_cnode *n = &gf_ctl_cluster(ctl)->nodes[i];
	struct stamp *st = &sh->s[i];
	if (st->fits && st->version == n->version && st->flags == n->flags &&
	    gf_ctl_node_is_ready(ctl, i) && !gf_ctl_node_is_cordoned(ctl, i)) {
		v->kind = GF_K8S_FITS;
		v->why[0] = '\0';
		sh->owner->hits++;
		return;
	}
	sh->owner->misses++;
	gf_k8s_verdict(ctl, i, m, v);
	st->fits = v->kind == GF_K8S_FITS;
	st->version = n->version;
	st->flags = n->flags;
}

void gf_k8s_answers_counts(const struct gf_k8s_answers *c, uint64_t *hits,
			   uint64_t *misses)
{
	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
}
