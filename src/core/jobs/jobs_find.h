/*
 * jobs_find.h - internal (src/core/jobs): finding things by name in the
 * scheduling core: a GPU model, a class, a node (a job: table.h).  The lowest
 * module: it reads struct gf_ctl and calls no other file of core/jobs.
 */
#ifndef GF_CORE_JOBS_FIND_H
#define GF_CORE_JOBS_FIND_H

#include <stdbool.h>
#include <stddef.h>

struct gf_cluster;
struct gf_ctl;
struct gf_err;

/* The cluster's model id of name (case-insensitive), or -1. */
int gf__model_find(const struct gf_cluster *c, const char *name);
/* gf__model_find, else the model naming the same catalog model by
 * another of its names (gf_catalog_same: "h100-80gb" finds h100-sxm). */
int gf__model_resolve(const struct gf_cluster *c, const char *name);
/* The index of name among n records stride bytes apart from list, each
 * starting with its name (a class or team of the config, a team of the
 * core), or -1. */
int gf__name_index(const void *list, size_t stride, int n, const char *name);
/* The config's class index of name, or -1. */
int gf__class_find(const struct gf_ctl *ctl, const char *name);
/* A name of a team, class, block or node: terminated inside its array
 * and of letters, digits, '.', '_', '-'. */
bool gf__name_ok(const char *s, size_t size);

/* The node index of name, or -1. */
int gf__node_find(const struct gf_ctl *ctl, const char *name);
/* Node i's name indexed, nodes being named in index order; GF_ECONFLICT
 * (nothing indexed) when another node has it. */
int gf__names_insert(struct gf_ctl *ctl, int i);

#endif
