/*
 * charge.c - GET /v1/chargeback: what `gpufleet chargeback --db` says,
 * served by the controller over its own store and nodes.  Usage: every
 * run kept in the store (chargeback's store reader, on its own
 * connection), and every replica running now, up to now; capacity: the
 * nodes the controller knows, priced by the config's prices: block, else
 * the prices file of its chargeback: section (docs/chargeback.md has
 * both formats), each over the whole window (the controller does not
 * keep when a node joined or left yet, so a node that joined during the
 * window shows idle for the time before).  Query: window=START,END or
 * 24h (required), aggregate=team[,class...] (default team), share_idle,
 * idle_by_node, split_idle (1 or true), step=1d, mig_rule=compute|memory.
 * An admin's token sees every team; a team's token its own team's rows
 * alone (a filter team=NAME, added to the query's; authz.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/charge.h>

#include "chargeback/chargeback.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

/* Answer 400 naming the parameter; GF_EINVAL. */
__attribute__((format(printf, 2, 3))) static int bad(struct gf_http_req *r,
						     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_reply_verror(r, 400, "invalid", fmt, ap);
	va_end(ap);
	return GF_EINVAL;
}

static bool flag(struct gf_http_req *r, const char *name)
{
	const char *v = gf_req_query(r, name);
	return v && (!strcmp(v, "1") || !strcmp(v, "true") || !*v);
}

/* A team's token: only its team's allocations (authz.c's OWN scope). */
static int team_only(struct gf_http_req *r, struct gf_charge_input *in,
		     struct gf_charge_opts *o, const struct gf_grant *g)
{
	if (!g->team || !g->team[0])
		return 0;
	char m[GF_TEAM_NAME_MAX + 8];
	struct gf_err e;
	if (gf_fmt(m, sizeof(m), "team=%s", g->team) != 0 ||
	    o->nfilter == GF_CHARGE_MAX_MATCH ||
	    gf_charge_match_parse(in, m, &o->filter[o->nfilter++], &e) != 0)
		return bad(r,
			   "a token of team '%.48s' sees that team alone: "
			   "no room for its filter",
			   g->team);
	return 0;
}

/* The query into o; 0 or answered 400. */
static int options(struct gf_http_req *r, struct gf_charge_input *in,
		   struct gf_charge_opts *o, int64_t now)
{
	struct gf_err e;
	int64_t s, t;
	const char *w = gf_req_query(r, "window");
	if (!w)
		return bad(r, "'window': required (START,END or 24h)");
	if (gf_cb_parse_window(w, now, &s, &t, &e) != 0)
		return bad(r, "'window': %s", e.msg);
	gf_charge_opts_init(o, s, t);
	o->now_ms = now;
	o->share_idle = flag(r, "share_idle");
	o->idle_by_node = flag(r, "idle_by_node");
	o->split_idle = flag(r, "split_idle");
	const char *step = gf_req_query(r, "step");
	if (step && gf_cb_parse_window(step, 0, &s, &t, &e) == 0)
		o->step_ms = t - s;
	else if (step)
		return bad(r, "'step': expected a duration like 1d");
	const char *mig = gf_req_query(r, "mig_rule");
	if (mig && strcmp(mig, "compute") && strcmp(mig, "memory"))
		return bad(r, "'mig_rule': compute or memory");
	if (mig)
		o->mig_rule = strcmp(mig, "memory") ? GF_CHARGE_MIG_COMPUTE
						    : GF_CHARGE_MIG_MEMORY;
	const char *agg = gf_req_query(r, "aggregate");
	char keys[256];
	if (gf_fmt(keys, sizeof(keys), "%s", agg ? agg : "team") != 0)
		return bad(r, "'aggregate': over %zu bytes", sizeof(keys) - 1);
	char *save = NULL;
	for (char *k = strtok_r(keys, ",", &save); k;
	     k = strtok_r(NULL, ",", &save)) {
		if (o->nagg == GF_CHARGE_MAX_KEYS ||
		    gf_charge_key_parse(in, k, &o->agg[o->nagg++], &e) != 0)
			return bad(r, "'aggregate': %s",
				   o->nagg == GF_CHARGE_MAX_KEYS
					   ? "too many keys"
					   : e.msg);
	}
	return 0;
}

/* The nodes the controller knows, priced, over the window. */
static int assets(struct gf_service *s, struct gf_charge_input *in,
		  const struct gf_charge_opts *o, const struct gf_cb_prices *p,
		  const char *cluster, struct gf_err *e)
{
	int rc = 0;
	pthread_mutex_lock(&s->ctl_lock);
	const struct gf_cluster *c = gf_ctl_cluster(s->ctl);
	for (int i = 0; rc == 0 && i < gf_ctl_nnodes(s->ctl); i++) {
		const struct gf_cnode *n = &c->nodes[i];
		const char *model = n->ngpus ? c->models[n->model] : "";
		struct gf_charge_asset a = {
			.start_ms = o->start_ms,
			.end_ms = o->end_ms,
			.gpus = n->ngpus,
			.cpu_cores = n->cpu_cap / 1000.0,
			.ram_gib = (double)n->mem_cap / 1024.0,
			.gpu_price_hr =
				n->ngpus ? gf_cb_gpu_price(p, model) : 0,
			.cpu_price_hr = p->cpu_core_hr,
			.ram_price_hr = p->ram_gib_hr,
		};
		rc = gf_charge_intern(in, cluster, strlen(cluster), &a.cluster);
		if (rc == 0)
			rc = gf_charge_intern(in, c->names[i],
					      strlen(c->names[i]), &a.node);
		if (rc == 0 && *model)
			rc = gf_charge_intern(in, model, strlen(model),
					      &a.gpu_model);
		if (rc == 0 && isnan(a.gpu_price_hr) && n->ngpus)
			rc = gf_err_set(e, GF_EINVAL,
					"no price for GPU model '%s' (node "
					"'%s'): add it to the prices file",
					model, c->names[i]);
		if (rc == 0)
			rc = gf_charge_add_asset(in, &a);
	}
	pthread_mutex_unlock(&s->ctl_lock);
	return rc;
}

int gf__charge_get(struct gf_http_req *r, void *arg)
{
	struct gf_call *call = arg;
	struct gf_service *s = call->s;
	const struct gf_serve_config *cfg = s->o.cfg;
	if (!cfg->charge_prices[0] && !cfg->prices)
		return gf_reply_error(r, 404, "not-configured",
				      "no chargeback: no prices: block nor "
				      "chargeback: prices file in the "
				      "config (docs/chargeback.md)");
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_cb_prices p;
	struct gf_charge_result res;
	struct gf_err e;
	gf_err_clear(&e);
	gf_charge_input_init(&in);
	gf_cb_prices_init(&p);
	int64_t now = gf_clock_wall_ms();
	int rc = options(r, &in, &o, now);
	if (rc == 0)
		rc = team_only(r, &in, &o, &call->grant);
	if (rc) {
		gf_charge_input_release(&in);
		return 0;
	}
	const char *cluster =
		cfg->charge_cluster[0] ? cfg->charge_cluster : "gpufleet";
	unsigned status = 500;
	if (cfg->prices) { /* the block, in the file's place */
		p = *cfg->prices;
		p.node = NULL; /* the config's to free */
		p.node_hr = NULL;
		p.nnodes = 0;
	}
	if ((rc = cfg->prices ? 0
			      : gf_cb_read_prices(cfg->charge_prices, &p,
						  &e)) == 0 &&
	    (rc = assets(s, &in, &o, &p, cluster, &e)) == 0 &&
	    (rc = gf_cb_read_db(&in, s->o.db, cluster, now, &e)) == 0) {
		status = 422;
		rc = gf_charge_run(&in, &o, &res, &e);
	}
	if (rc == 0) {
		struct gf_buf b;
		gf_buf_init(&b, 256u << 20);
		struct gf_cb_view v = { &in, &o, NULL, p.currency, NULL };
		rc = gf_cb_render_json(&v, &res, &b);
		rc = rc ? gf_reply_error(r, 500, "too-big",
					 "the report is over 256 MiB: a "
					 "shorter window or fewer keys")
			: gf_reply_json(r, 200, &b);
		gf_buf_release(&b);
		gf_charge_result_release(&res);
	} else {
		rc = gf_reply_error(r, status,
				    status == 422 ? "invalid" : "internal",
				    "%s", e.msg);
	}
	gf_cb_prices_release(&p);
	gf_charge_input_release(&in);
	return rc;
}
