use sqlx::{postgres::PgArguments, query::QueryAs, PgPool, Postgres};

use super::{search_conditions, update_statement, Bind, ItemRow, COLUMNS};
use crate::{
    demo::items::model::{Item, ItemFilter, ItemId, ItemPatch},
    store::{now_ms, Result},
};

fn placeholder(index: usize) -> String {
    format!("${index}")
}

fn bind_all<'q, O>(
    mut query: QueryAs<'q, Postgres, O, PgArguments>,
    binds: Vec<Bind>,
) -> QueryAs<'q, Postgres, O, PgArguments> {
    for bind in binds {
        query = match bind {
            Bind::Text(text) => query.bind(text),
            Bind::Integer(integer) => query.bind(integer),
        };
    }
    query
}

pub(super) async fn seed(pool: &PgPool, key: &str, items: &[Item]) -> Result<bool> {
    let mut transaction = pool.begin().await?;
    let claimed = sqlx::query(
        "INSERT INTO settings (key, value, updated_at) VALUES ($1, 'yes', $2) ON CONFLICT (key) DO NOTHING",
    )
    .bind(key)
    .bind(now_ms())
    .execute(&mut *transaction)
    .await?;
    if claimed.rows_affected() == 0 {
        transaction.rollback().await?;
        return Ok(false);
    }
    for item in items {
        insert_one(&mut transaction, item).await?;
    }
    transaction.commit().await?;
    Ok(true)
}

async fn insert_one(connection: &mut sqlx::PgConnection, item: &Item) -> Result<ItemRow> {
    let sql = format!(
        "INSERT INTO demo_items ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING {COLUMNS}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(&item.id.0)
        .bind(&item.title)
        .bind(&item.description)
        .bind(item.status.as_str())
        .bind(item.priority.as_str())
        .bind(&item.assignee)
        .bind(item.due_date.map(|date| date.to_string()))
        .bind(item.created_at_ms)
        .bind(item.updated_at_ms)
        .bind(item.completed_at_ms)
        .fetch_one(connection)
        .await?)
}

pub(super) async fn insert(pool: &PgPool, item: &Item) -> Result<ItemRow> {
    let mut connection = pool.acquire().await?;
    insert_one(&mut connection, item).await
}

pub(super) async fn by_id(pool: &PgPool, id: &ItemId) -> Result<Option<ItemRow>> {
    let sql = format!("SELECT {COLUMNS} FROM demo_items WHERE id = $1");
    Ok(sqlx::query_as(&sql)
        .bind(&id.0)
        .fetch_optional(pool)
        .await?)
}

pub(super) async fn search(pool: &PgPool, filter: &ItemFilter) -> Result<(Vec<ItemRow>, i64)> {
    let (clause, binds) = search_conditions(filter, placeholder);
    let (_, count_binds) = search_conditions(filter, placeholder);
    let sql = format!(
        "SELECT {COLUMNS} FROM demo_items{clause} ORDER BY updated_at DESC, id LIMIT {} OFFSET {}",
        filter.limit, filter.offset
    );
    let rows = bind_all(sqlx::query_as(&sql), binds)
        .fetch_all(pool)
        .await?;
    let count_sql = format!("SELECT COUNT(*) FROM demo_items{clause}");
    let (total,): (i64,) = bind_all(sqlx::query_as(&count_sql), count_binds)
        .fetch_one(pool)
        .await?;
    Ok((rows, total))
}

pub(super) async fn update(
    pool: &PgPool,
    ids: &[ItemId],
    patch: &ItemPatch,
    now: i64,
) -> Result<Vec<ItemRow>> {
    let (sql, binds) = update_statement(ids.len(), patch, now, placeholder);
    let mut query = bind_all(sqlx::query_as(&sql), binds);
    for id in ids {
        query = query.bind(&id.0);
    }
    let mut transaction = pool.begin().await?;
    let rows = query.fetch_all(&mut *transaction).await?;
    transaction.commit().await?;
    Ok(rows)
}

pub(super) async fn delete(pool: &PgPool, ids: &[ItemId]) -> Result<Vec<String>> {
    let placeholders = (1..=ids.len())
        .map(placeholder)
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!("DELETE FROM demo_items WHERE id IN ({placeholders}) RETURNING id");
    let mut query = sqlx::query_scalar(&sql);
    for id in ids {
        query = query.bind(&id.0);
    }
    let mut transaction = pool.begin().await?;
    let deleted = query.fetch_all(&mut *transaction).await?;
    transaction.commit().await?;
    Ok(deleted)
}
