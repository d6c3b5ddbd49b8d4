/* The history database over SQLite, every call checked. */
#include "gx_db.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

struct gx_db {
    sqlite3 *handle;
    char path[1024];
};

/* Whether the file system holding path has no room left for this user. */
static int full_disk(const char *path)
{
    char folder[1024];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash)
        *(slash == folder ? slash + 1 : slash) = 0;
    else
        snprintf(folder, sizeof folder, ".");
    struct statvfs disk;
    return statvfs(folder, &disk) == 0 && disk.f_bavail == 0;
}

static int db_fail(gx_db *db, gx_error *error, const char *call, int code, const char *sql)
{
    const char *message = db && db->handle ? sqlite3_errmsg(db->handle) : sqlite3_errstr(code);
    enum gx_error_kind kind = GX_ERR_SYSTEM;
    gx_fail(error, kind, "%s failed on %s: %s (%s)", call, db ? db->path : "the history database", message,
            sqlite3_errstr(code));
    if (sql)
        gx_error_append(error, " in: %.120s", sql);
    if ((code & 0xff) == SQLITE_FULL || ((code & 0xff) == SQLITE_IOERR && db && full_disk(db->path)))
        gx_error_append(error, "; the disk is full");
    if ((code & 0xff) == SQLITE_READONLY)
        gx_error_append(error, "; the history is read-only here (its file or folder is not writable by this user)");
    return kind;
}

/* Whether the file is a gpuexp history or an empty database, before anything is written to it:
   a corrupt file or another program's database is refused and left exactly as it was (no journal
   mode set, no table added). */
static int check_is_history(gx_db *db, gx_error *error)
{
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db->handle,
                                "SELECT count(*), coalesce(sum(name = 'gpuexp_schema'), 0) FROM sqlite_master "
                                "WHERE type = 'table'",
                                -1, &statement, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(statement);
    if (rc != SQLITE_ROW) {
        int primary = sqlite3_errcode(db->handle) & 0xff;
        if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_FORMAT)
            gx_fail(error, GX_ERR_SYSTEM,
                    "%s is not a gpuexp history: SQLite cannot read it (%s); it was left as it was", db->path,
                    sqlite3_errstr(rc));
        else /* the file may well be a history: what failed is the disk (full, an I/O error) or the system */
            gx_fail(error, GX_ERR_SYSTEM, "cannot open the history %s: %s%s; it was left as it was", db->path,
                    sqlite3_errmsg(db->handle), full_disk(db->path) ? " (the disk is full)" : "");
        sqlite3_finalize(statement);
        return GX_ERR_SYSTEM;
    }
    int tables = sqlite3_column_int(statement, 0), ours = sqlite3_column_int(statement, 1);
    sqlite3_finalize(statement);
    if (tables > 0 && ours == 0)
        return gx_fail(error, GX_ERR_SYSTEM,
                       "%s is an SQLite database of another program, not a gpuexp history (%d table(s), none of "
                       "gpuexp's); it was left as it was: give another history file",
                       db->path, tables);
    return GX_OK;
}

int gx_db_open(const char *path, int readonly, gx_db **out, gx_error *error)
{
    *out = NULL;
    gx_db *db = calloc(1, sizeof *db);
    if (!db)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory opening %s", path);
    snprintf(db->path, sizeof db->path, "%s", path);
    int rc;
    if (readonly) {
        /* immutable: a history on a read-only disk or of another user is read without the WAL's
           shared-memory file, which reading in WAL mode would otherwise have to create */
        char *uri = sqlite3_mprintf("file:%s?immutable=1", path);
        rc = uri ? sqlite3_open_v2(uri, &db->handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) : SQLITE_NOMEM;
        sqlite3_free(uri);
    } else {
        rc = sqlite3_open_v2(path, &db->handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    }
    if (rc != SQLITE_OK) {
        db_fail(db, error, "sqlite3_open_v2", rc, NULL);
        gx_db_close(db);
        return GX_ERR_SYSTEM;
    }
    rc = sqlite3_busy_timeout(db->handle, 30000); /* another run writing: wait, do not fail */
    if (rc != SQLITE_OK) {
        db_fail(db, error, "sqlite3_busy_timeout", rc, NULL);
        gx_db_close(db);
        return GX_ERR_SYSTEM;
    }
    /* SQLite opens a file it cannot write read-only without a word: say so before a write fails */
    if (!readonly && sqlite3_db_readonly(db->handle, "main") == 1) {
        gx_fail(error, GX_ERR_SYSTEM,
                "the history %s cannot be written by this user (a read-only file, folder or disk); "
                "give another --history",
                path);
        gx_db_close(db);
        return GX_ERR_SYSTEM;
    }
    if (check_is_history(db, error)) {
        gx_db_close(db);
        return GX_ERR_SYSTEM;
    }
    /* WAL: readers never block the nightly's writer; a killed writer's transaction is rolled back
     * on the next open. */
    if (!readonly &&
        gx_db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", error)) {
        gx_db_close(db);
        return GX_ERR_SYSTEM;
    }
    *out = db;
    return GX_OK;
}

void gx_db_close(gx_db *db)
{
    if (!db)
        return;
    if (db->handle)
        sqlite3_close_v2(db->handle);
    free(db);
}

int gx_db_exec(gx_db *db, const char *sql, gx_error *error)
{
    char *message = NULL;
    int rc = sqlite3_exec(db->handle, sql, NULL, NULL, &message);
    if (rc != SQLITE_OK) {
        gx_fail(error, GX_ERR_SYSTEM, "sqlite3_exec failed on %s: %s (%s) in: %.120s", db->path,
                message ? message : sqlite3_errmsg(db->handle), sqlite3_errstr(rc), sql);
        if ((rc & 0xff) == SQLITE_FULL)
            gx_error_append(error, "; the disk is full");
        sqlite3_free(message);
        return GX_ERR_SYSTEM;
    }
    return GX_OK;
}

static int bind(gx_db *db, sqlite3_stmt *statement, int index, const gx_db_value *value, const char *sql,
                gx_error *error)
{
    int rc;
    switch (value->type) {
    case GX_DB_INTEGER: rc = sqlite3_bind_int64(statement, index, value->integer); break;
    case GX_DB_REAL: rc = sqlite3_bind_double(statement, index, value->real); break;
    case GX_DB_TEXT:
        rc = sqlite3_bind_text64(statement, index, value->text, value->length, SQLITE_TRANSIENT, SQLITE_UTF8);
        break;
    default: rc = sqlite3_bind_null(statement, index);
    }
    return rc == SQLITE_OK ? GX_OK : db_fail(db, error, "sqlite3_bind", rc, sql);
}

int gx_db_run(gx_db *db, const char *sql, const gx_db_value *params, int count, gx_db_row_fn row, void *user,
              gx_error *error)
{
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db->handle, sql, -1, &statement, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db, error, "sqlite3_prepare_v2", rc, sql);
    int result = GX_OK;
    for (int i = 0; i < count && result == GX_OK; i++)
        result = bind(db, statement, i + 1, &params[i], sql, error);
    int columns = sqlite3_column_count(statement);
    const char **names = columns ? calloc((size_t)columns, sizeof *names) : NULL;
    gx_db_value *values = columns ? calloc((size_t)columns, sizeof *values) : NULL;
    if (columns && (!names || !values))
        result = gx_fail(error, GX_ERR_SYSTEM, "out of memory reading %s", db->path);
    for (int c = 0; c < columns && result == GX_OK; c++)
        names[c] = sqlite3_column_name(statement, c);
    while (result == GX_OK) {
        rc = sqlite3_step(statement);
        if (rc == SQLITE_DONE)
            break;
        if (rc != SQLITE_ROW) {
            result = db_fail(db, error, "sqlite3_step", rc, sql);
            break;
        }
        if (!row)
            continue;
        for (int c = 0; c < columns; c++) {
            gx_db_value *v = &values[c];
            memset(v, 0, sizeof *v);
            switch (sqlite3_column_type(statement, c)) {
            case SQLITE_INTEGER:
                v->type = GX_DB_INTEGER;
                v->integer = sqlite3_column_int64(statement, c);
                break;
            case SQLITE_FLOAT:
                v->type = GX_DB_REAL;
                v->real = sqlite3_column_double(statement, c);
                break;
            case SQLITE_NULL: v->type = GX_DB_NULL; break;
            default: /* text, and blobs read as text */
                v->type = GX_DB_TEXT;
                v->text = (const char *)sqlite3_column_text(statement, c);
                v->length = (size_t)sqlite3_column_bytes(statement, c);
                if (!v->text && sqlite3_errcode(db->handle) == SQLITE_NOMEM)
                    result = db_fail(db, error, "sqlite3_column_text", SQLITE_NOMEM, sql);
            }
        }
        if (result == GX_OK)
            result = row(user, columns, names, values, error);
    }
    free(names);
    free(values);
    rc = sqlite3_finalize(statement);
    if (rc != SQLITE_OK && result == GX_OK)
        result = db_fail(db, error, "sqlite3_finalize", rc, sql);
    return result;
}

long long gx_db_last_insert_id(gx_db *db)
{
    return sqlite3_last_insert_rowid(db->handle);
}

int gx_db_changes(gx_db *db)
{
    return sqlite3_changes(db->handle);
}

const char *gx_db_sqlite_version(void)
{
    return sqlite3_libversion();
}
