/*
 * json_fixture.c - the fake NVML answering from a recorded NVML dump (as
 * ../shared/fixtures/h200/nvml-dump.json, read where it lies).  Read with
 * jansson; unknown keys are ignored, so a later dump with more answers
 * still loads.
 *
 * What is taken from each "gpus" entry, and what the fake then answers:
 *   name, uuid, pci.busId, pci.pciDeviceId, pci.pciSubSystemId
 *   memory.total, memory_v2.reserved  (v1's used includes the reserved,
 *                          v2's leaves it out, as the dump shows)
 *   numa_node              a number, else ("ERR:...") Not Supported
 *   cpu_affinity_words     hex words, 64 CPUs each
 *   mig_mode [cur, pend]   MIG mode; else Not Supported
 *   gpm_supported          GPM (its metrics replay the default series)
 *   nvlink                 "ERR:Not Supported" as the first link's state:
 *                          no NVLink; else one slot per entry, active
 *                          when its state is 1 (the dump has no peers)
 *   field_values.TOTAL_ENERGY.ull   the energy counter's start (mJ)
 * and "driver" for nvmlSystemGetDriverVersion.  Telemetry the dump does
 * not hold (clocks, power, utilisation...) comes from the text format's
 * defaults; what it does not say (ECC totals, processes, NVLink traffic)
 * is Not Supported or empty.  The GPU-instance profiles are not read: the
 * dump has no placements (MIG is off there).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

static const char *str_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* A number, or a hex string ("0x233510de"); dflt when neither. */
static unsigned long long num_of(const json_t *v, unsigned long long dflt)
{
	if (json_is_integer(v))
		return (unsigned long long)json_integer_value(v);
	const char *s = json_string_value(v);
	if (s && (strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0))
		return strtoull(s, NULL, 16);
	return dflt;
}

static void read_affinity(struct nvmlDevice_st *g, const json_t *words)
{
	size_t i;
	const json_t *w;
	json_array_foreach(words, i, w)
	{
		if (i >= sizeof(g->cpus) / sizeof(g->cpus[0]))
			break;
		g->cpus[i] = (unsigned long)num_of(w, 0);
		g->has_cpus |= g->cpus[i] != 0;
	}
}

static void read_nvlink(struct nvmlDevice_st *g, const json_t *links)
{
	size_t i;
	const json_t *l;
	json_array_foreach(links, i, l)
	{
		const json_t *state = json_object_get(l, "state");
		if (!json_is_integer(state) || i >= MAX_LINKS)
			return; /* "ERR:Not Supported": no NVLink */
		g->nlinks = (int)i + 1;
		g->links[i].active = json_integer_value(state) == 1;
	}
}

static void read_gpu(struct nvmlDevice_st *g, const json_t *o)
{
	const json_t *pci = json_object_get(o, "pci");
	gpu_init(g, str_of(pci, "busId"));
	snprintf(g->name, sizeof(g->name), "%s", str_of(o, "name"));
	snprintf(g->uuid, sizeof(g->uuid), "%s", str_of(o, "uuid"));
	g->pci_device_id =
		(unsigned)num_of(json_object_get(pci, "pciDeviceId"), 0);
	g->pci_subsys =
		(unsigned)num_of(json_object_get(pci, "pciSubSystemId"), 0);
	g->mem_total = num_of(
		json_object_get(json_object_get(o, "memory"), "total"), 0);
	g->mem_reserved = num_of(
		json_object_get(json_object_get(o, "memory_v2"), "reserved"),
		0);
	const json_t *numa = json_object_get(o, "numa_node");
	g->numa = json_is_integer(numa) ? (int)json_integer_value(numa) : -1;
	read_affinity(g, json_object_get(o, "cpu_affinity_words"));
	const json_t *mig = json_object_get(o, "mig_mode");
	if (json_array_size(mig) == 2) {
		g->has_mig = 1;
		g->mig_cur = (int)num_of(json_array_get(mig, 0), 0);
		g->mig_pend = (int)num_of(json_array_get(mig, 1), 0);
	}
	g->gpm = json_integer_value(json_object_get(o, "gpm_supported")) == 1;
	read_nvlink(g, json_object_get(o, "nvlink"));
	const json_t *energy = json_object_get(
		json_object_get(o, "field_values"), "TOTAL_ENERGY");
	if (json_integer_value(json_object_get(energy, "ret")) == 0)
		g->energy0 = num_of(json_object_get(energy, "ull"), g->energy0);
}

int load_json(const char *path, char *driver, size_t driver_size)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err);
	if (!root) {
		fprintf(stderr, "fake nvml: %s:%d: %s\n", path, err.line,
			err.text);
		return -1;
	}
	const json_t *list = json_object_get(root, "gpus");
	if (!json_is_array(list)) {
		fprintf(stderr, "fake nvml: %s: no \"gpus\" array\n", path);
		json_decref(root);
		return -1;
	}
	const char *ver = json_string_value(json_object_get(root, "driver"));
	if (ver)
		snprintf(driver, driver_size, "%s", ver);
	size_t i;
	const json_t *o;
	json_array_foreach(list, i, o)
	{
		if (ngpus >= MAX_GPUS)
			break;
		read_gpu(&gpus[ngpus++], o);
	}
	json_decref(root);
	return 0;
}
