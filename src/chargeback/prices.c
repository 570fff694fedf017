/*
 * prices.c - the prices file of `gpufleet chargeback --prices FILE`:
 *
 *   currency: USD
 *   gpu:                 # per GPU-hour, by the assets' gpu_model
 *     H100: 2.50
 *     L40S: 1.10
 *     default: 0.95      # any model not listed (optional)
 *   cpu_core: 0.031611   # per core-hour
 *   ram_gib: 0.004237    # per GiB-hour
 *   nodes:               # a node's whole price per hour, when that is
 *     n7: 35.0           # all that is known (split by the prices above)
 *   mig_rule: compute    # or memory
 *
 * Every key is known or the file is refused, naming the line; every
 * price a number >= 0.  Models match case-insensitively.
 *
 * And the `prices:` block of serve.yaml (gf_cb_prices_block): model to
 * per-GPU-hour, beside cpu_core, ram_gib, currency and default.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chargeback/chargeback.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/yaml.h"

#define PRICES_FILE_MAX (4u << 20)

static int price(const struct gf_yr *r, const struct gf_yn *n, const char *what,
		 double *out)
{
	const char *s = gf_yn_str(n);
	char *end;
	*out = s ? strtod(s, &end) : NAN;
	if (!s || end == s || *end || !isfinite(*out) || *out < 0)
		return gf_yr_fail(r, n,
				  "'%s': expected a price >= 0, got '%.60s'",
				  what, s ? s : "(not a scalar)");
	return 0;
}

/* A mapping NAME: PRICE, each name 1 to size - 1 bytes: 0 with *name
 * and *hr of pair i, 1 past the end, or an error. */
static int name_price(const struct gf_yr *r, const struct gf_yn *m, size_t i,
		      const char *what, size_t size, const char **name,
		      double *hr)
{
	const struct gf_yn *k, *v;
	if (!gf_yn_pair(m, i, &k, &v))
		return 1;
	*name = gf_yn_str(k);
	int rc = price(r, v, *name ? *name : what, hr);
	if (rc)
		return rc;
	if (!*name || !**name || strlen(*name) >= size)
		return gf_yr_fail(r, k, "'%s': a %s name of 1 to %zu bytes",
				  what, !strcmp(what, "gpu") ? "model" : "node",
				  size - 1);
	return 0;
}

static int gpu_map(const struct gf_yr *r, const struct gf_yn *m,
		   struct gf_cb_prices *p)
{
	if (gf_yn_type(m) != GF_YN_MAP)
		return gf_yr_fail(r, m, "'gpu': expected model: price lines");
	const char *name;
	double hr;
	int rc;
	for (size_t i = 0; (rc = name_price(r, m, i, "gpu", sizeof(p->model[0]),
					    &name, &hr)) == 0;
	     i++) {
		if (strcmp(name, "default") == 0) {
			p->gpu_default_hr = hr;
			continue;
		}
		if (p->nmodels == GF_CB_MODELS_MAX)
			return gf_yr_fail(r, m, "'gpu': more than %d models",
					  GF_CB_MODELS_MAX);
		memcpy(p->model[p->nmodels], name, strlen(name) + 1);
		p->model_hr[p->nmodels++] = hr;
	}
	return rc < 0 ? rc : 0;
}

static int node_map(const struct gf_yr *r, const struct gf_yn *m,
		    struct gf_cb_prices *p)
{
	if (gf_yn_type(m) != GF_YN_MAP)
		return gf_yr_fail(r, m, "'nodes': expected node: price lines");
	size_t n = gf_yn_len(m);
	if (n > GF_CB_NODES_MAX)
		return gf_yr_fail(r, m, "'nodes': more than %d nodes",
				  GF_CB_NODES_MAX);
	p->node = gf_calloc(n + 1, sizeof(*p->node));
	p->node_hr = gf_calloc(n + 1, sizeof(*p->node_hr));
	const char *name;
	int rc;
	for (size_t i = 0;
	     (rc = name_price(r, m, i, "nodes", sizeof(p->node[0]), &name,
			      &p->node_hr[p->nnodes])) == 0;
	     i++)
		memcpy(p->node[p->nnodes++], name, strlen(name) + 1);
	return rc < 0 ? rc : 0;
}

static int root_key(const struct gf_yr *r, const char *key,
		    const struct gf_yn *v, void *obj)
{
	struct gf_cb_prices *p = obj;
	const char *val = gf_yn_str(v);
	if (strcmp(key, "gpu") == 0)
		return gpu_map(r, v, p);
	if (strcmp(key, "nodes") == 0)
		return node_map(r, v, p);
	if (strcmp(key, "cpu_core") == 0)
		return price(r, v, key, &p->cpu_core_hr);
	if (strcmp(key, "ram_gib") == 0)
		return price(r, v, key, &p->ram_gib_hr);
	if (strcmp(key, "currency") == 0) {
		if (!val || !*val || strlen(val) >= sizeof(p->currency))
			return gf_yr_fail(r, v,
					  "'currency': 1 to 15 characters");
		memcpy(p->currency, val, strlen(val) + 1);
		return 0;
	}
	p->has_mig_rule = true;
	if (val && strcmp(val, "compute") == 0)
		p->mig_rule = GF_CHARGE_MIG_COMPUTE;
	else if (val && strcmp(val, "memory") == 0)
		p->mig_rule = GF_CHARGE_MIG_MEMORY;
	else
		return gf_yr_fail(r, v,
				  "'mig_rule': expected compute or memory, "
				  "got '%.40s'",
				  val ? val : "(not a scalar)");
	return 0;
}

void gf_cb_prices_init(struct gf_cb_prices *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->currency, "USD", sizeof("USD"));
	p->gpu_default_hr = NAN;
	p->cpu_core_hr = NAN;
	p->ram_gib_hr = NAN;
}

void gf_cb_prices_release(struct gf_cb_prices *p)
{
	gf_free(p->node);
	gf_free(p->node_hr);
	p->nnodes = 0;
}

int gf_cb_read_prices(const char *path, struct gf_cb_prices *p,
		      struct gf_err *e)
{
	char *text, name[300];
	size_t len;
	gf_note(name, sizeof(name), "'%s'", path); /* chargeback quotes paths */
	int rc = gf_file_read(path, PRICES_FILE_MAX, &text, &len, e);
	if (rc)
		return rc;
	struct gf_yaml *y;
	rc = gf_yaml_parse(text, len, name, 0, &y, e);
	gf_free(text);
	if (rc)
		return rc;
	struct gf_yr r = { y, e };
	const struct gf_yn *root = gf_yaml_root(y);
	if (gf_yn_type(root) != GF_YN_MAP)
		rc = gf_yr_fail(&r, root, "expected a mapping of prices");
	else
		rc = gf_yr_each(&r, root, NULL,
				"currency, gpu, cpu_core, ram_gib, nodes, "
				"mig_rule",
				root_key, p);
	gf_yaml_free(y);
	return rc;
}

double gf_cb_gpu_price(const struct gf_cb_prices *p, const char *model)
{
	for (int i = 0; model && *model && i < p->nmodels; i++)
		if (strcasecmp(p->model[i], model) == 0)
			return p->model_hr[i];
	return p->gpu_default_hr;
}

/* One key of a prices: block. */
static int block_key(const struct gf_yr *r, const char *key,
		     const struct gf_yn *v, void *obj)
{
	struct gf_cb_prices *p = obj;
	if (!strcmp(key, "currency") || !strcmp(key, "cpu_core") ||
	    !strcmp(key, "ram_gib"))
		return root_key(r, key, v, p);
	double hr;
	char what[96];
	gf_note(what, sizeof(what), "prices: %.60s", key);
	int rc = price(r, v, what, &hr);
	if (rc)
		return rc;
	if (!strcmp(key, "default")) {
		p->gpu_default_hr = hr;
		return 0;
	}
	if (strlen(key) >= sizeof(p->model[0]))
		return gf_yr_fail(r, v,
				  "'prices': a model name of 1 to %zu "
				  "bytes",
				  sizeof(p->model[0]) - 1);
	if (p->nmodels == GF_CB_MODELS_MAX)
		return gf_yr_fail(r, v, "'prices': more than %d models",
				  GF_CB_MODELS_MAX);
	memcpy(p->model[p->nmodels], key, strlen(key) + 1);
	p->model_hr[p->nmodels++] = hr;
	return 0;
}

int gf_cb_prices_block(const struct gf_yr *r, const struct gf_yn *v,
		       struct gf_cb_prices *p)
{
	if (gf_yn_type(v) != GF_YN_MAP)
		return gf_yr_fail(r, v,
				  "'prices': expected GPU model: price per "
				  "GPU-hour lines");
	const struct gf_yn *k, *x;
	int rc = 0;
	for (size_t i = 0; rc == 0 && gf_yn_pair(v, i, &k, &x); i++) {
		const char *key = gf_yn_str(k);
		rc = key && *key ? block_key(r, key, x, p)
				 : gf_yr_fail(r, k,
					      "'prices': keys are model "
					      "names");
	}
	return rc;
}

int gf_cb_read_prices_block(const char *path, struct gf_cb_prices *p,
			    bool *found, struct gf_err *e)
{
	*found = false;
	struct gf_yaml *y;
	int rc = gf_yaml_read(path, PRICES_FILE_MAX, &y, e);
	if (rc)
		return rc;
	struct gf_yr r = { y, e };
	const struct gf_yn *root = gf_yaml_root(y), *k, *v;
	for (size_t i = 0; root && gf_yn_type(root) == GF_YN_MAP &&
			   gf_yn_pair(root, i, &k, &v);
	     i++) {
		const char *name = gf_yn_str(k);
		if (!name || strcmp(name, "prices") != 0)
			continue;
		*found = true;
		rc = gf_cb_prices_block(&r, v, p);
		break;
	}
	gf_yaml_free(y);
	return rc;
}
