/* The history database: a thin, checked layer over SQLite (every call's failure is named with
 * SQLite's own message). No Lua here; lua/gpuexp/store/history.lua holds the schema and the queries. */
#ifndef GX_DB_H
#define GX_DB_H

#include <stddef.h>

#include "gx_error.h"

typedef struct gx_db gx_db;

typedef enum { GX_DB_NULL, GX_DB_INTEGER, GX_DB_REAL, GX_DB_TEXT } gx_db_type;

typedef struct gx_db_value {
    gx_db_type type;
    long long integer;
    double real;
    const char *text; /* GX_DB_TEXT: not necessarily NUL-terminated */
    size_t length;
} gx_db_value;

/* Opens (creating) the database at path: write-ahead log, a busy timeout for a second writer,
 * foreign keys on. */
/* readonly: opened as an immutable file (no WAL files made), for listing a history one cannot write. */
int gx_db_open(const char *path, int readonly, gx_db **db, gx_error *error);
void gx_db_close(gx_db *db);

/* Runs statements with no parameters and no results (schema, BEGIN, COMMIT). */
int gx_db_exec(gx_db *db, const char *sql, gx_error *error);

/* Called for each result row; a nonzero return stops the statement with that error kind (the
 * callback sets *error). */
typedef int (*gx_db_row_fn)(void *user, int count, const char *const *names, const gx_db_value *values,
                            gx_error *error);

/* Runs one statement with parameters bound to ?1..?n; row may be NULL. */
int gx_db_run(gx_db *db, const char *sql, const gx_db_value *params, int count, gx_db_row_fn row, void *user,
              gx_error *error);

long long gx_db_last_insert_id(gx_db *db);
int gx_db_changes(gx_db *db);
const char *gx_db_sqlite_version(void);

#endif
