/*
 * infile.h - opening the files a user names as input (scenarios, data
 * files) for reading.
 *
 * fopen() happily opens a directory and the first read then fails with
 * EISDIR, which used to surface as "read error" and exit 1.  These refuse a
 * directory at open time with errno EISDIR, so each loader's own "cannot
 * open ... : <strerror>" message says "Is a directory" and the command
 * exits 2 (bad input), like for a missing file.
 */
#ifndef AISIM_INFILE_H
#define AISIM_INFILE_H

#include <stdio.h>

/* Opens path for reading (mode "r" or "rb"); NULL with errno set on
 * failure, EISDIR for a directory. */
FILE *infile_open(const char *path, const char *mode);

/* The same as a file descriptor (for gzdopen); -1 with errno set. */
int infile_open_fd(const char *path);

#endif
