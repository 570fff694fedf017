/*
 * hwloc_load.h - fill a node model from hwloc: the live machine or a
 * recorded hwloc XML (version 1.x or 2.0, what hwloc 2.9 reads).
 */
#ifndef GF_TOPO_HWLOC_LOAD_H
#define GF_TOPO_HWLOC_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/err.h>
#include <gpufleet/node.h>

/* XML files larger than this are refused (GF_ETOOBIG). */
#define GF_TOPO_XML_MAX (64u << 20)

/* The cage of the child that parses an XML first (hwloc_load.c's
 * probe_xml): CPU seconds, wall milliseconds, and MiB of address space
 * it may add (plus four times the document's size). */
#define GF_TOPO_PROBE_CPU_S   4
#define GF_TOPO_PROBE_WALL_MS 6000
#define GF_TOPO_PROBE_MEM_MB  256
/* NUMA os indexes past this are refused (hwloc would size nodesets by
 * them); PU os indexes past GF_BITMAP_BITS are (the node model's). */
#define GF_TOPO_PROBE_NUMA_MAX 4096

struct gf_topo_source {
	const char *xml_path; /* NULL: the live machine */
	const char *xml_buf;  /* or an XML document in memory */
	size_t xml_len;
	bool this_system; /* the XML is a recording of this machine */
	bool cpu_only;	  /* a CPU node: GPUs left out, none no error */
};

/*
 * Load the topology into n (initialised by the caller; finished by this
 * call, GPUs in NVML order).  A node with no GPU is an error (GF_ENOGPU),
 * as is an unreadable, malformed or too new XML; e->msg names the file and
 * the cause.  On error n holds nothing the caller must use (release it).
 */
int gf_topo_load(struct gf_node *n, const struct gf_topo_source *src,
		 struct gf_err *e) GF_MUST_CHECK;

/*
 * Bind the calling process: CPUs to cpus (every thread), memory to mems
 * (NUMA os indexes, strict binding; the calling thread's policy, which
 * Linux keeps per thread and children inherit across fork and exec),
 * through hwloc on the live machine.  Either may be NULL to leave it as
 * is.
 */
int gf_topo_bind_self(const struct gf_bitmap *cpus,
		      const struct gf_bitmap *mems,
		      struct gf_err *e) GF_MUST_CHECK;

#endif
