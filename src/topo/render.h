/*
 * render.h - a node's topology for people (nvidia-smi's `topo -m` layout,
 * then GPU details and findings) and for scripts (JSON).
 */
#ifndef GF_TOPO_RENDER_H
#define GF_TOPO_RENDER_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/findings.h>
#include <gpufleet/node.h>

#include "util/buf.h"

/* The matrix exactly as `nvidia-smi topo -m` lays it out (-mp: pcie_only). */
int gf_render_matrix(const struct gf_node *n, bool pcie_only,
		     struct gf_buf *out) GF_MUST_CHECK;
/* Matrix, per-GPU summary, findings and notes. */
int gf_render_topo_text(const struct gf_node *n, bool pcie_only,
			const struct gf_finding *f, int nf,
			struct gf_buf *out) GF_MUST_CHECK;
struct gf_node_source;
/* {"source", "gpus": [], "error", "detail"}: what `topo --json` and the
 * agent's topology document say when there is no node to show (no GPU
 * here, an unreadable file). */
int gf_render_topo_error_json(const struct gf_node_source *src,
			      const struct gf_err *e,
			      struct gf_buf *out) GF_MUST_CHECK;
int gf_render_topo_json(const struct gf_node *n, bool pcie_only,
			const struct gf_finding *f, int nf,
			struct gf_buf *out) GF_MUST_CHECK;

#endif
