/*
 * fe_data.h - labelled image data for the federated-learning model: loaders
 * for the UCI 8x8 digits CSV and gzip'd IDX (MNIST) files, a seeded
 * train/test split, and the device partitions (IID, Dirichlet(alpha) label
 * skew, label shards).
 *
 * Features are doubles scaled to [0, 1] (digits: /16, MNIST: /255), stored
 * row-major, one row per sample.  Loaders validate everything they read and
 * name the file and line (CSV) or byte offset (IDX) of the first problem;
 * they never leave a half-filled dataset behind.
 *
 * This module includes no engine header: it is used by the simulator glue
 * and by the tests alike.
 */
#ifndef AISIM_FE_DATA_H
#define AISIM_FE_DATA_H

#include <stddef.h>

#include "aisim/err.h"
#include "aisim/rng.h"

typedef struct fe_dataset {
    size_t n;           /* samples */
    size_t dim;         /* features per sample */
    int classes;        /* labels are 0 .. classes-1 */
    double *x;          /* n * dim features in [0, 1], row-major; owned */
    int *y;             /* n labels; owned */
} fe_dataset;

/* Loads a CSV of `dim` integer features in [0, max_value] followed by an
 * integer label in [0, classes) on each line; features are divided by
 * max_value.  Blank lines are not allowed.  Errors (ENOENT, EIO, EINVAL)
 * name "path:line".  On error *d is left empty. */
int fe_data_load_csv(const char *path, size_t dim, int classes, double max_value,
                     fe_dataset *d, err *e);

/* Loads gzip'd (or plain: zlib reads both) IDX files: images with magic
 * 0x00000803 (uint8, n x rows x cols) and labels with magic 0x00000801
 * (uint8, n, each < classes).  Pixels are divided by 255.  Errors name the
 * file and what is wrong (missing, bad magic, truncated, count mismatch). */
int fe_data_load_idx(const char *images_path, const char *labels_path, int classes,
                     fe_dataset *d, err *e);

void fe_data_fini(fe_dataset *d);

/* Shuffles the samples with r and splits them: the first `n_test` go to
 * *test, up to `n_train` of the rest (0: all) to *train.  Both are new
 * datasets owned by the caller.  Requires n_test < d->n (asserted). */
void fe_data_split(const fe_dataset *d, rng *r, size_t n_test, size_t n_train,
                   fe_dataset *train, fe_dataset *test);

enum fe_partition { FE_PART_IID, FE_PART_DIRICHLET, FE_PART_SHARDS };

/* Assigns every sample of d to one of n_dev devices.  IID: a shuffled
 * round-robin.  Dirichlet: for each class, proportions drawn from
 * Dir(alpha, ..., alpha) over the devices (alpha > 0; small alpha = strong
 * label skew).  Shards: samples sorted by label, cut into
 * n_dev * shards_per_dev equal shards, each device gets shards_per_dev
 * random shards.  Every device gets at least one sample (a device left empty
 * takes one from the largest).  Requires n_dev <= d->n (asserted; callers
 * report it as bad input).  Returns owner[] (d->n entries, malloc'ed). */
int *fe_partition(const fe_dataset *d, size_t n_dev, enum fe_partition kind, double alpha,
                  int shards_per_dev, rng *r);

/* Gamma(shape, 1) variate (Marsaglia & Tsang 2000; shape < 1 by boosting). */
double fe_gamma(rng *r, double shape);


/* A numeric CSV table with a header line of column names (device files,
 * availability traces). */
typedef struct fe_table {
    size_t ncol, nrow;
    char **names;           /* ncol column names; owned */
    double *v;              /* nrow * ncol values, row-major; owned */
    int *line;              /* nrow: line of each row in the file; owned */
    int *cpos;              /* nrow * ncol: column (1-based character) of each value */
} fe_table;

/* Loads a CSV whose first line names the columns and whose other lines hold
 * one decimal number per column ('#' lines and blank lines skipped).  Errors
 * name "path:line" and the column.  On error *t is left empty. */
int fe_table_load(const char *path, fe_table *t, err *e);
void fe_table_fini(fe_table *t);
/* Index of column `name`, or -1. */
int fe_table_col(const fe_table *t, const char *name);

#endif
