/*
 * scenario.h - loading a scenario: file or embedded example, --set and
 * --seed overrides, the top-level keys, and the model's section.
 *
 * Top-level keys:
 *   name         run name (default: the file's base name)
 *   description  free text
 *   seed         run seed, an integer from 0 to 2^53 (default 1): every seed is
 *                exact wherever it is held as a double (JSON readers, tables)
 *   stop         simulated time at which the run stops (optional)
 *   model        which model runs (see `aisim list`)
 *   <model>      the model's own section, e.g. `queue:`
 */
#ifndef AISIM_CLI_SCENARIO_H
#define AISIM_CLI_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/model.h"

typedef struct scenario {
    cfg_doc *doc;               /* the tree; owns every string below */
    const char *name;
    const char *description;
    int64_t seed;
    int64_t stop_ps;            /* SIM_TIME_MAX when not given */
    const model_ops *model;
    cfg_node *section;          /* the model's section */
    char *base_dir;             /* directory for relative data paths */
    char default_name[128];
} scenario;

/* Loads `spec` (a file path, or the name of an embedded example such as
 * "core/mm1"), applies the `nsets` assignments in `sets` and the seed
 * override (if seed_override is not NULL), and binds the top-level keys.
 * The model's section is not bound yet: configure() does that.  On error
 * returns a negative code; *sc is then empty. */
int scenario_load(scenario *sc, const char *spec, const char *const *sets, int nsets,
                  const char *seed_override, err *e);
/* The same for scenario text already in memory (`name` is used in messages
 * and as the default run name; relative data paths resolve against
 * base_dir).  Used by the fuzzer. */
int scenario_load_text(scenario *sc, const char *name, const char *text, size_t len,
                       const char *base_dir, const char *const *sets, int nsets, err *e);
void scenario_fini(scenario *sc);

/* The directory built-in examples resolve their data files against (it
 * holds examples/ and data/): $AISIM_HOME if set; else PREFIX/share/aisim
 * when libaisim.so or the program runs from an installed PREFIX/lib or
 * PREFIX/bin (make install); else the source tree aisim was built in. */
const char *scenario_data_dir(void);

/* The seed domain: integers 0 .. 2^53. */
#define SCENARIO_SEED_MAX INT64_C(9007199254740992)

/* Parses a --seed value exactly: decimal digits only, 0 .. 2^53.  False if
 * it is not one. */
bool scenario_parse_seed(const char *text, int64_t *seed);

#endif
