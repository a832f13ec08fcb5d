/*
 * infile.h - opening the files a user names as input (scenarios, data
 * files) for reading.
 *
 * fopen() happily opens a directory and the first read then fails with
 * EISDIR, which used to surface as "read error" and exit 1.  These refuse a
 * directory at open time with errno EISDIR, so each loader's own "cannot
 * open ... : <strerror>" message says "Is a directory" and the command
 * exits 2 (bad input), like for a missing file.
 *
 * Byte-order marks, one rule for every text data file (CSV tables, CDFs,
 * traces, profiles, workload logs; the scenario's YAML too, whose parser
 * does the same): a UTF-8 byte-order mark at the very start of a regular
 * file is skipped, so line 1 column 1 is the first character after it;
 * anywhere else the bytes are data and the loader's own error names them.
 * Binary files (infile_open_fd) are read as they are.
 */
#ifndef AISIM_INFILE_H
#define AISIM_INFILE_H

#include <stdio.h>

/* Opens path for reading (mode "r" or "rb"), past a leading UTF-8
 * byte-order mark; NULL with errno set on failure, EISDIR for a
 * directory. */
FILE *infile_open(const char *path, const char *mode);

/* The same as a file descriptor (for gzdopen); -1 with errno set. */
int infile_open_fd(const char *path);

#endif
