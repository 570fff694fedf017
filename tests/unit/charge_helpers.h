/*
 * charge_helpers.h - what the chargeback tests share (test_charge.c,
 * test_charge_read.c): times, interned strings, assets and records
 * built from a few fields, rows and totals looked up, keys and share
 * rules parsed, a run that must succeed.
 */
#ifndef GF_TEST_CHARGE_HELPERS_H
#define GF_TEST_CHARGE_HELPERS_H

#include <math.h>

#include <gpufleet/charge.h>

#include "helpers.h"

#define H   3600000LL
#define DAY (24 * H)
#define T0  1714521600000LL /* 2024-05-01T00:00:00Z */

static inline uint32_t S(struct gf_charge_input *in, const char *s)
{
	uint32_t id = 0;
	assert_int_equal(gf_charge_intern(in, s, strlen(s), &id), 0);
	return id;
}

static inline void asset(struct gf_charge_input *in, const char *cluster,
			 const char *node, int64_t s, int64_t t, double gpus,
			 double cpu, double ram, double gp, double cp,
			 double rp, const char *model)
{
	struct gf_charge_asset a = { s,	 t, gpus, cpu, ram, gp, cp,
				     rp, 0, 0,	  0,   0,   0 };
	a.cluster = S(in, cluster);
	a.node = S(in, node);
	a.gpu_model = model ? S(in, model) : 0;
	a.src = S(in, "assets.csv");
	a.line = (uint32_t)in->nasset + 2;
	assert_int_equal(gf_charge_add_asset(in, &a), 0);
}

struct rec_spec {
	const char *cluster, *node, *ns, *pod, *ctr;
	int64_t s, t;
	double gpus, cpu_req, cpu_use, ram_req, ram_use, other;
	const char *labels, *mig, *model, *gpu_ids;
};

/* The pod's owner, services and annotations of a record. */
struct own_spec {
	const char *kind, *ctl, *svc, *annos;
};

static inline void record_own(struct gf_charge_input *in,
			      const struct rec_spec *x,
			      const struct own_spec *o)
{
	struct gf_charge_record r;
	memset(&r, 0, sizeof(r));
	r.cluster = S(in, x->cluster);
	r.node = S(in, x->node);
	r.ns = S(in, x->ns ? x->ns : "");
	r.pod = S(in, x->pod ? x->pod : "");
	r.container = S(in, x->ctr ? x->ctr : "");
	r.start_ms = x->s;
	r.end_ms = x->t;
	r.gpus = x->gpus;
	r.cpu_req = x->cpu_req;
	r.cpu_use = x->cpu_use;
	r.ram_req = x->ram_req;
	r.ram_use = x->ram_use;
	r.other_cost = x->other;
	struct gf_charge_extra xe;
	memset(&xe, 0, sizeof(xe));
	xe.labels = x->labels ? S(in, x->labels) : 0;
	xe.gpu_model = x->model ? S(in, x->model) : 0;
	xe.mig_profile = x->mig ? S(in, x->mig) : 0;
	xe.gpu_ids = x->gpu_ids ? S(in, x->gpu_ids) : 0;
	xe.controller_kind = o && o->kind ? S(in, o->kind) : 0;
	xe.controller = o && o->ctl ? S(in, o->ctl) : 0;
	xe.services = o && o->svc ? S(in, o->svc) : 0;
	xe.annotations = o && o->annos ? S(in, o->annos) : 0;
	r.extra = gf_charge_extra_id(in, &xe);
	r.src = S(in, "records.csv");
	r.line = (uint32_t)in->nrec + 2;
	assert_int_equal(gf_charge_add_record(in, &r), 0);
}

static inline void record(struct gf_charge_input *in, const struct rec_spec *x)
{
	record_own(in, x, NULL);
}

/* not inline: a failed lookup ends the test (fail() is not noreturn) */
static const struct gf_charge_row *row(const struct gf_charge_result *res,
				       const char *name)
{
	for (size_t i = 0; i < res->steps[0].nrows; i++)
		if (strcmp(res->steps[0].rows[i].name, name) == 0)
			return &res->steps[0].rows[i];
	print_message("no row '%s'\n", name);
	fail();
	return NULL;
}

static inline void total_is(const struct gf_charge_result *res,
			    const char *name, double want)
{
	double got = gf_charge_row_total(row(res, name));
	if (fabs(got - want) > 1e-5) {
		print_message("%s: total %.6f, expected %.6f\n", name, got,
			      want);
		fail();
	}
}

static inline void near(double got, double want)
{
	if (fabs(got - want) > 1e-5) {
		print_message("got %.6f, expected %.6f\n", got, want);
		fail();
	}
}

static inline void agg(struct gf_charge_input *in, struct gf_charge_opts *o,
		       const char *key)
{
	struct gf_err e;
	assert_int_equal(gf_charge_key_parse(in, key, &o->agg[o->nagg++], &e),
			 0);
}

static inline void share(struct gf_charge_input *in, struct gf_charge_opts *o,
			 const char *m)
{
	struct gf_err e;
	assert_int_equal(
		gf_charge_match_parse(in, m, &o->share[o->nshare++], &e), 0);
}

static inline void run_ok(const struct gf_charge_input *in,
			  const struct gf_charge_opts *o,
			  struct gf_charge_result *res)
{
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_charge_run(in, o, res, &e);
	if (rc)
		print_message("gf_charge_run: %s\n", e.msg);
	assert_int_equal(rc, 0);
}

#endif
