/*
 * migparted.c - mig-parted YAML through util/yaml (nodes
 * carry their line), with the unmarshaller's rules (reference
 * mig-and-metrics.md 2.1): unknown keys are errors, `devices` is "all" or
 * a list of indexes, mig-devices is required when mig-enabled is true and
 * must be empty when it is false, counts are >= 0 and not all 0.
 */
#include "mig/migparted.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/mig.h>

#include "util/fmt.h"
#include "util/mem.h"
#include "util/yaml.h"

typedef struct gf_yr rd_t;
typedef struct gf_yn node_t;

/* One device filter: a PCI id like 0x20B010DE of an NVIDIA device. */
static int parse_pci(const rd_t *r, const node_t *x, const node_t *n,
		     struct gf_mp_entry *en)
{
	const char *s = gf_yn_str(x);
	char *end;
	errno = 0;
	unsigned long v = s ? strtoul(s, &end, 16) : 0;
	if (!s || *s == '\0' || *end != '\0' || errno || v > 0xffffffffUL ||
	    strncmp(s, "0x", 2) != 0)
		return gf_yr_fail(r, x ? x : n,
				  "'device-filter': '%s' is not a PCI id "
				  "like 0x20B010DE",
				  s ? s : "?");
	if ((v & 0xffff) != 0x10de)
		return gf_yr_fail(r, x,
				  "'device-filter': %s is not an NVIDIA "
				  "device (vendor 10DE)",
				  s);
	en->filters[en->nfilters++] = (uint16_t)(v >> 16);
	return 0;
}

static int parse_filter(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	if (gf_yn_type(n) == GF_YN_SCALAR)
		return parse_pci(r, n, n, en);
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(r, n,
				  "'device-filter': expected a string or a "
				  "list");
	if (gf_yn_len(n) > GF_MP_MAX_FILTERS)
		return gf_yr_fail(r, n, "more than %d device filters",
				  GF_MP_MAX_FILTERS);
	for (size_t i = 0; i < gf_yn_len(n); i++) {
		int rc = parse_pci(r, gf_yn_at(n, i), n, en);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_devices(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	const char *s = gf_yn_str(n);
	if (s) {
		if (strcmp(s, "all") != 0)
			return gf_yr_fail(r, n,
					  "'devices': expected \"all\" or a "
					  "list of GPU indexes, got '%s'",
					  s);
		en->all_devices = true;
		return 0;
	}
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(r, n,
				  "'devices': expected \"all\" or a list");
	for (size_t i = 0; i < gf_yn_len(n); i++) {
		const node_t *x = gf_yn_at(n, i);
		const char *v = gf_yn_str(x);
		char *end;
		long idx = v ? strtol(v, &end, 10) : -1;
		if (!v || *v == '\0' || *end != '\0' || idx < 0 || idx > 4095)
			return gf_yr_fail(r, x ? x : n,
					  "'devices': '%s' is not a GPU index",
					  v ? v : "?");
		if (en->ndevices >= GF_MP_MAX_DEVICES)
			return gf_yr_fail(r, n, "more than %d devices",
					  GF_MP_MAX_DEVICES);
		en->devices[en->ndevices++] = (int)idx;
	}
	return 0;
}

static int parse_mdev(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	if (gf_yn_type(n) != GF_YN_MAP)
		return gf_yr_fail(r, n,
				  "'mig-devices': expected a map of profile "
				  "to count");
	int total = 0;
	const node_t *k, *v;
	for (size_t i = 0; gf_yn_pair(n, i, &k, &v); i++) {
		const char *name = gf_yn_str(k), *cnt = gf_yn_str(v);
		if (!name || !gf_mig_profile_name_ok(name) ||
		    strlen(name) >= sizeof(en->mdev[0].name))
			return gf_yr_fail(r, k ? k : n,
					  "'mig-devices': '%s' is not a MIG "
					  "profile name (like 1g.10gb or "
					  "3g.40gb)",
					  name ? name : "?");
		char *end;
		long c = cnt ? strtol(cnt, &end, 10) : -1;
		if (!cnt || *cnt == '\0' || *end != '\0' || c < 0 || c > 64)
			return gf_yr_fail(r, v ? v : n,
					  "'mig-devices': count for '%s' must "
					  "be a number from 0 to 64",
					  name);
		if (en->nmdev >= GF_MP_MAX_MDEV)
			return gf_yr_fail(r, n, "more than %d profiles",
					  GF_MP_MAX_MDEV);
		struct gf_mp_mdev *m = &en->mdev[en->nmdev++];
		memcpy(m->name, name, strlen(name) + 1);
		m->count = (int)c;
		m->line = gf_yn_line(k);
		total += (int)c;
	}
	if (en->nmdev > 0 && total == 0)
		return gf_yr_fail(r, n, "'mig-devices': every count is 0");
	return 0;
}

struct entry_ctx {
	struct gf_mp_entry *en;
	bool have_dev, have_en;
	const node_t *mdev;
};

static int entry_field(const rd_t *r, const char *key, const node_t *v,
		       void *obj)
{
	struct entry_ctx *x = obj;
	if (!strcmp(key, "device-filter"))
		return parse_filter(r, v, x->en);
	if (!strcmp(key, "devices")) {
		x->have_dev = true;
		return parse_devices(r, v, x->en);
	}
	if (!strcmp(key, "mig-enabled")) {
		x->have_en = true;
		/* mig-parted's true/false; YAML 1.1's yes/no are not */
		if (!gf_yn_bool(v, &x->en->mig_enabled) ||
		    !strchr("tTfF", *gf_yn_str(v)))
			return gf_yr_fail(r, v,
					  "'mig-enabled': expected true or "
					  "false");
		return 0;
	}
	x->mdev = v;
	return parse_mdev(r, v, x->en);
}

static int parse_entry(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	memset(en, 0, sizeof(*en));
	en->line = gf_yn_line(n);
	if (gf_yn_type(n) != GF_YN_MAP)
		return gf_yr_fail(r, n,
				  "expected a map with devices, mig-enabled, "
				  "mig-devices");
	struct entry_ctx x = { en, false, false, NULL };
	int rc = gf_yr_each(r, n, NULL,
			    "device-filter, devices, mig-enabled, mig-devices",
			    entry_field, &x);
	if (rc)
		return rc;
	if (!x.have_dev)
		return gf_yr_fail(r, n, "missing 'devices'");
	if (!x.have_en)
		return gf_yr_fail(r, n, "missing 'mig-enabled'");
	if (en->mig_enabled && x.mdev == NULL)
		return gf_yr_fail(r, n,
				  "'mig-enabled' is true but 'mig-devices' is "
				  "missing");
	if (!en->mig_enabled && en->nmdev > 0)
		return gf_yr_fail(r, x.mdev,
				  "MIG devices included when "
				  "'mig-enabled' is false");
	return 0;
}

/* One named config: its list of entries. */
static int parse_config(const rd_t *r, const node_t *k, const node_t *v,
			struct gf_mp_config *c)
{
	gf_note(c->name, sizeof(c->name), "%s",
		gf_yn_str(k) ? gf_yn_str(k) : "");
	c->line = gf_yn_line(k);
	gf_note(c->path, sizeof(c->path), "%s", gf_yaml_name(r->y));
	if (gf_yn_type(v) != GF_YN_SEQ || gf_yn_len(v) == 0)
		return gf_yr_fail(r, v,
				  "config '%s': expected a non-empty "
				  "list of entries",
				  c->name);
	c->entries = gf_calloc(gf_yn_len(v), sizeof(*c->entries));
	for (size_t i = 0; i < gf_yn_len(v); i++) {
		int rc = parse_entry(r, gf_yn_at(v, i), &c->entries[c->n++]);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_root(const rd_t *r, const node_t *root, struct gf_mp_file *f)
{
	if (gf_yn_type(root) != GF_YN_MAP)
		return gf_yr_fail(r, root,
				  "expected a map with version and "
				  "mig-configs");
	int rc = gf_yr_keys(r, root, NULL, "version, mig-configs");
	if (rc)
		return rc;
	const node_t *vnode = gf_yn_get(root, "version");
	const node_t *configs = gf_yn_get(root, "mig-configs");
	const char *version = gf_yn_str(vnode);
	if (!version)
		return gf_yr_fail(r, root, "missing 'version'");
	if (strcmp(version, "v1") != 0)
		return gf_yr_fail(r, vnode,
				  "unknown version '%s' (expected v1)",
				  version);
	if (gf_yn_type(configs) != GF_YN_MAP || gf_yn_len(configs) == 0)
		return gf_yr_fail(r, configs ? configs : root,
				  "'mig-configs' must be a non-empty map");
	f->configs = gf_calloc(gf_yn_len(configs), sizeof(*f->configs));
	const node_t *k, *v;
	for (size_t i = 0; gf_yn_pair(configs, i, &k, &v); i++) {
		rc = parse_config(r, k, v, &f->configs[f->n++]);
		if (rc)
			return rc;
	}
	return 0;
}

/* A GPU Operator ConfigMap: the mig-parted file is data."config.yaml". */
static const node_t *configmap_payload(const struct gf_yaml *y)
{
	const node_t *root = gf_yaml_root(y);
	const char *kind = gf_yn_str(gf_yn_get(root, "kind"));
	if (!kind || strcmp(kind, "ConfigMap"))
		return NULL;
	const node_t *v = gf_yn_get(gf_yn_get(root, "data"), "config.yaml");
	return gf_yn_str(v) ? v : NULL;
}

int gf_mp_read(const char *path, struct gf_mp_file *f, struct gf_err *e)
{
	memset(f, 0, sizeof(*f));
	if (gf_fmt(f->path, sizeof(f->path), "%s", path))
		return gf_err_set(e, GF_ETOOBIG, "%.80s...: path too long",
				  path);
	struct gf_yaml *y, *inner = NULL;
	int rc = gf_yaml_read(path, GF_MP_MAX_FILE, &y, e);
	if (rc)
		return rc;
	const node_t *payload = configmap_payload(y);
	if (payload) {
		/* a block scalar: its text starts on the next line */
		size_t len;
		const char *text = gf_yn_scalar(payload, &len);
		rc = gf_yaml_parse(text, len, path, gf_yn_line(payload), &inner,
				   e);
	}
	if (rc == 0) {
		struct gf_yr r = { inner ? inner : y, e };
		rc = parse_root(&r, gf_yaml_root(r.y), f);
	}
	gf_yaml_free(inner);
	gf_yaml_free(y);
	if (rc)
		gf_mp_release(f);
	return rc;
}

void gf_mp_release(struct gf_mp_file *f)
{
	for (int i = 0; i < f->n; i++)
		gf_free(f->configs[i].entries);
	gf_free(f->configs);
	f->n = 0;
}

const struct gf_mp_config *gf_mp_find(const struct gf_mp_file *f,
				      const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->configs[i].name, name) == 0)
			return &f->configs[i];
	return NULL;
}

/* Does the entry's profile multiset fit model m?  0, or why in msg. */
static int fits(const struct gf_mig_model *m, const struct gf_mp_entry *en,
		char *msg, size_t size)
{
	int counts[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < en->nmdev; i++) {
		int p = gf_mig_profile_find(m, en->mdev[i].name);
		if (p < 0) {
			gf_note(msg, size, "%s has no profile '%s'", m->id,
				en->mdev[i].name);
			return -1;
		}
		counts[p] += en->mdev[i].count;
	}
	struct gf_mig_layout l = { .n = 0 };
	if (gf_mig_place(m, counts, &l) != 0) {
		gf_note(msg, size,
			"these instances do not fit on one %s (memory "
			"slices, allowed starts or maximum counts)",
			m->id);
		return -1;
	}
	return 0;
}

/* Is name a profile of some GPU we know, by table or by name only? */
static bool known_name(const char *name, bool *tabled)
{
	*tabled = false;
	for (int k = 0; k < gf_mig_model_count(); k++)
		*tabled |= gf_mig_profile_find(gf_mig_model_at(k), name) >= 0;
	if (*tabled)
		return true;
	for (int k = 0; k < gf_mig_untabled_count(); k++)
		if (gf_mig_untabled_has(gf_mig_untabled_at(k), name))
			return true;
	return false;
}

static bool has_all(const struct gf_mig_model *m, const struct gf_mp_entry *en)
{
	for (int j = 0; j < en->nmdev; j++)
		if (gf_mig_profile_find(m, en->mdev[j].name) < 0)
			return false;
	return true;
}

/* A GPU without a table here that has every profile of the entry. */
static const struct gf_mig_untabled *
untabled_with_all(const struct gf_mp_entry *en)
{
	for (int k = 0; k < gf_mig_untabled_count(); k++) {
		const struct gf_mig_untabled *u = gf_mig_untabled_at(k);
		bool all = true;
		for (int j = 0; j < en->nmdev && all; j++)
			all = gf_mig_untabled_has(u, en->mdev[j].name);
		if (all)
			return u;
	}
	return NULL;
}

/* A compute-instance form, <C>c.<G>g.<N>gb: its GPU instance is known
 * only after the "<C>c." prefix, which our tables do not list. */
static bool ci_form(const char *name)
{
	const char *c = strchr(name, 'c');
	const char *g = strchr(name, 'g');
	return c && g && c < g;
}

/* An entry with a device filter: checked against each filtered model. */
static int validate_filtered(const struct gf_mp_file *f,
			     const struct gf_mp_config *cfg,
			     const struct gf_mp_entry *en, struct gf_buf *out,
			     int *warnings)
{
	int errors = 0;
	char why[200];
	for (int k = 0; k < en->nfilters; k++) {
		const struct gf_mig_model *m =
			gf_mig_model_by_pci(en->filters[k]);
		if (m) {
			if (fits(m, en, why, sizeof(why))) {
				gf_buf_printf(
					out, "%s:%d: error: config '%s': %s\n",
					f->path, en->line, cfg->name, why);
				errors++;
			}
			continue;
		}
		const struct gf_mig_untabled *u =
			gf_mig_untabled_by_pci(en->filters[k]);
		bool bad = false;
		for (int j = 0; u && j < en->nmdev; j++)
			if (!ci_form(en->mdev[j].name) &&
			    !gf_mig_untabled_has(u, en->mdev[j].name)) {
				gf_buf_printf(out,
					      "%s:%d: error: config '%s': "
					      "'%s' is not a profile of the "
					      "%s (0x%04X10DE)\n",
					      f->path, en->mdev[j].line,
					      cfg->name, en->mdev[j].name,
					      u->name, en->filters[k]);
				errors++;
				bad = true;
			}
		if (bad)
			continue;
		gf_buf_printf(out,
			      "%s:%d: warning: config '%s': no MIG table for "
			      "device 0x%04X10DE%s%s%s: profiles checked for "
			      "%s only\n",
			      f->path, en->line, cfg->name, en->filters[k],
			      u ? " (" : "", u ? u->name : "", u ? ")" : "",
			      u ? "name" : "form");
		(*warnings)++;
	}
	return errors;
}

/* id added to a list "a, b" of *n (a list too long is cut, marked). */
static void list_add(char *list, size_t size, int *n, const char *id)
{
	size_t len = strlen(list);
	gf_note(list + len, size - len, "%s%s", *n ? ", " : "", id);
	(*n)++;
}

/* An entry without a device filter: every model that has its profiles. */
static int validate_unfiltered(const struct gf_mp_file *f,
			       const struct gf_mp_config *cfg,
			       const struct gf_mp_entry *en, struct gf_buf *out,
			       int *warnings)
{
	int errors = 0;
	bool any_ci = false;
	for (int j = 0; j < en->nmdev; j++) {
		bool tabled;
		if (ci_form(en->mdev[j].name)) {
			any_ci = true;
			continue;
		}
		if (!known_name(en->mdev[j].name, &tabled)) {
			gf_buf_printf(out,
				      "%s:%d: error: config '%s': '%s' is a "
				      "profile of no GPU gpufleet knows "
				      "(neither its tables nor the names "
				      "NVIDIA's configs use)\n",
				      f->path, en->mdev[j].line, cfg->name,
				      en->mdev[j].name);
			errors++;
		}
	}
	if (errors)
		return errors;
	char ok[400] = "", bad[400] = "", why[200] = "";
	int nok = 0, nbad = 0;
	for (int k = 0; k < gf_mig_model_count(); k++) {
		const struct gf_mig_model *m = gf_mig_model_at(k);
		if (!has_all(m, en))
			continue;
		if (fits(m, en, why, sizeof(why)) == 0) {
			list_add(ok, sizeof(ok), &nok, m->id);
		} else {
			list_add(bad, sizeof(bad), &nbad, m->id);
		}
	}
	const struct gf_mig_untabled *u = untabled_with_all(en);
	if (nok > 0 && nbad > 0) {
		gf_buf_printf(out,
			      "%s:%d: note: config '%s': valid on %s only; "
			      "these instances do not fit on one %s (memory "
			      "slices, allowed starts or maximum counts)\n",
			      f->path, en->line, cfg->name, ok, bad);
	} else if (nok == 0 && (any_ci || u)) {
		gf_buf_printf(out,
			      "%s:%d: warning: config '%s': %s%s%s: checked "
			      "for %s only\n",
			      f->path, en->line, cfg->name,
			      any_ci ? "compute-instance profiles"
				     : "profiles of ",
			      any_ci ? "" : u->name,
			      any_ci ? "" : " (no MIG table in gpufleet)",
			      any_ci ? "form" : "name");
		(*warnings)++;
	} else if (nok == 0 && nbad > 0) {
		gf_buf_printf(out,
			      "%s:%d: error: config '%s': no MIG-capable GPU "
			      "model can hold these instances together "
			      "(tried: %s)\n",
			      f->path, en->line, cfg->name, bad);
		errors++;
	} else if (nok == 0) {
		gf_buf_printf(out,
			      "%s:%d: error: config '%s': no GPU model has "
			      "all of these profiles\n",
			      f->path, en->line, cfg->name);
		errors++;
	}
	return errors;
}

int gf_mp_validate(const struct gf_mp_file *f, struct gf_buf *out,
		   int *warnings)
{
	int errors = 0;
	*warnings = 0;
	for (int c = 0; c < f->n; c++) {
		const struct gf_mp_config *cfg = &f->configs[c];
		for (int i = 0; i < cfg->n; i++) {
			const struct gf_mp_entry *en = &cfg->entries[i];
			if (!en->mig_enabled || en->nmdev == 0)
				continue;
			errors += en->nfilters > 0
					  ? validate_filtered(f, cfg, en, out,
							      warnings)
					  : validate_unfiltered(f, cfg, en, out,
								warnings);
		}
	}
	return errors;
}
