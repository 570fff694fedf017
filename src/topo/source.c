/*
 * source.c - a node from its source: hwloc (live or XML) or a template,
 * then NVML joined where the source asks for it.
 */
#include "topo/source.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <gpufleet/catalog.h>
#include <gpufleet/template.h>

#include "topo/hwloc_load.h"
#include "topo/nccl_xml.h"
#include "topo/nvml.h"
#include "topo/this_system.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* NVML joined to n; live (may be NULL) takes NVML's GPUs when it
 * answers. */
static void join_nvml(struct gf_node *n, struct gf_live *live)
{
	const struct gf_nvml *nv;
	struct gf_err e;
	gf_err_clear(&e);
	double t0 = gf_clock_ms();
	if (gf_nvml_open(&nv, &e) != 0) {
		gf_log(GF_LOG_DEBUG, "topo", "%s", e.msg);
		gf_node_note(n, "%s", e.msg);
		return;
	}
	if (gf_nvml_join(nv, n, &e) != 0)
		gf_node_note(n, "%s", e.msg);
	if (live && gf_live_nvml_gpus(live, nv, &e) != 0)
		gf_node_note(n, "%s", e.msg);
	gf_nvml_close();
	gf_log(GF_LOG_DEBUG, "topo", "NVML joined in %.1f ms",
	       gf_clock_ms() - t0);
}

int gf_node_source_busy_gpus(const struct gf_node_source *s,
			     const struct gf_node *n, struct gf_bitmap *busy,
			     struct gf_err *e)
{
	gf_bitmap_zero(busy);
	bool live = !s->xml && !s->nccl_xml && !s->template_name;
	if (!(s->nvml == 1 || (s->nvml < 0 && live)))
		return 0;
	const struct gf_nvml *nv;
	int rc = gf_nvml_open(&nv, e);
	if (rc)
		return rc;
	rc = gf_nvml_busy_gpus(nv, n, busy, e);
	gf_nvml_close();
	return rc;
}

const char *gf_node_source_name(const struct gf_node_source *s, char *buf,
				unsigned size)
{
	if (s->template_name)
		gf_note(buf, size, "template %s", s->template_name);
	else if (s->xml || s->nccl_xml)
		gf_note(buf, size, "%s", s->xml ? s->xml : s->nccl_xml);
	else
		gf_note(buf, size, "this machine");
	return buf;
}

int gf_node_source_load(const struct gf_node_source *s, struct gf_node **out,
			struct gf_err *e)
{
	*out = NULL;
	if (!!s->xml + !!s->nccl_xml + !!s->template_name > 1)
		return gf_err_set(e, GF_EINVAL,
				  "an hwloc XML, an NCCL topology file and a "
				  "template exclude each other");
	struct gf_node *n = gf_node_new();
	double t0 = gf_clock_ms();
	int rc;
	if (s->template_name) {
		rc = gf_template_build(s->template_name, n, e);
	} else if (s->nccl_xml) {
		rc = gf_nccl_xml_load(n, s->nccl_xml, NULL, 0, NULL, e);
	} else {
		struct gf_topo_source src = { .xml_path = s->xml,
					      .this_system = s->this_system,
					      .cpu_only = s->cpu_only };
		rc = gf_topo_load(n, &src, e);
	}
	if (rc) {
		gf_node_free(n);
		return rc;
	}
	char name[256];
	gf_log(GF_LOG_DEBUG, "topo", "%s: %d GPUs, %d NICs loaded in %.1f ms",
	       gf_node_source_name(s, name, sizeof(name)), n->ngpus, n->nnics,
	       gf_clock_ms() - t0);
	bool live = !s->xml && !s->nccl_xml && !s->template_name;
	/* a recording said to be this machine's: compared with it */
	bool check = s->xml && s->this_system;
	struct gf_live *facts = check ? gf_malloc(sizeof(*facts)) : NULL;
	if (check && (rc = gf_live_read(facts, NULL, e)) != 0)
		goto out_fail;
	if (!s->cpu_only && (s->nvml == 1 || (s->nvml < 0 && live)))
		join_nvml(n, facts);
	if (check && (rc = gf_this_system_check(n, s->xml, facts, e)) != 0)
		goto out_fail;
	gf_free(facts);
	*out = n;
	return 0;
out_fail:
	gf_free(facts);
	gf_node_free(n);
	return rc;
}

bool gf__topo_gpu_init(struct gf_gpu *g, int pci, unsigned long vendor,
		       unsigned long device)
{
	memset(g, 0, sizeof(*g));
	g->pci = pci;
	g->mig_mode = -1;
	g->mig_pending = -1;
	g->numa_id = -1;
	g->vendor = vendor == 0x1002 ? GF_VENDOR_AMD : GF_VENDOR_NVIDIA;
	g->model =
		device ? gf_catalog_by_pci((uint16_t)vendor, (uint16_t)device)
		       : NULL;
	if (g->model) {
		gf_note(g->name, sizeof(g->name), "%s", g->model->name);
		g->memory_mib = g->model->memory_mib;
	}
	return g->model != NULL;
}
