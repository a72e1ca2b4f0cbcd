//! The demo site's items: CRUD, filtered search, and bulk changes in one transaction each.
//!
//! The demo items are a stand-in for a real site's API (DESIGN.md §8), so they live in their own
//! table (`demo_items`) and nothing else in Tessera reads them. Seeding is guarded by a settings
//! key written in the seeding transaction, so two processes starting at once seed once.

use super::{begin_write, decode_parsed, now_ms, Result, Store, StoreError};
use tessera_forms::dates::CivilDate;

use crate::records::items::{Item, ItemFilter, ItemId, ItemPage, ItemPatch, ItemStatus, Priority};

/// The settings key that records that the demo items were seeded.
const SEEDED_KEY: &str = "demo_items.seeded";

const COLUMNS: &str = "id, title, description, status, priority, assignee, due_date, created_at, updated_at, completed_at";

#[derive(sqlx::FromRow)]
struct ItemRow {
    id: String,
    title: String,
    description: String,
    status: String,
    priority: String,
    assignee: Option<String>,
    due_date: Option<String>,
    created_at: i64,
    updated_at: i64,
    completed_at: Option<i64>,
}

impl TryFrom<ItemRow> for Item {
    type Error = StoreError;

    fn try_from(row: ItemRow) -> Result<Self> {
        Ok(Self {
            status: decode_parsed("demo_items.status", &row.status, ItemStatus::parse)?,
            priority: decode_parsed("demo_items.priority", &row.priority, Priority::parse)?,
            due_date: row
                .due_date
                .as_deref()
                .map(|text| decode_parsed("demo_items.due_date", text, CivilDate::parse))
                .transpose()?,
            id: ItemId(row.id),
            title: row.title,
            description: row.description,
            assignee: row.assignee,
            created_at_ms: row.created_at,
            updated_at_ms: row.updated_at,
            completed_at_ms: row.completed_at,
        })
    }
}

/// A value bound to a search placeholder.
enum Bind {
    Text(String),
    Integer(i64),
}

/// Binds `$binds` (a `Vec<Bind>`) to `$query` in order; a macro so one spelling serves both
/// drivers' query types.
macro_rules! bind_all {
    ($query:expr, $binds:expr) => {{
        let mut query = $query;
        for bind in $binds {
            query = match bind {
                Bind::Text(text) => query.bind(text),
                Bind::Integer(integer) => query.bind(integer),
            };
        }
        query
    }};
}

/// The insert of one item, returning the stored row; a macro so the seeding transaction and a
/// single insert run the same statement on either driver.
macro_rules! insert_item {
    ($item:expr) => {
        sqlx::query_as::<_, ItemRow>(&INSERT_SQL)
            .bind(&$item.id.0)
            .bind(&$item.title)
            .bind(&$item.description)
            .bind($item.status.as_str())
            .bind($item.priority.as_str())
            .bind(&$item.assignee)
            .bind($item.due_date.map(|date| date.to_string()))
            .bind($item.created_at_ms)
            .bind($item.updated_at_ms)
            .bind($item.completed_at_ms)
    };
}

static INSERT_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT INTO demo_items ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         RETURNING {COLUMNS}"
    )
});

/// The n-th (1-based) parameter; numbered so the text filter can use one value twice.
fn placeholder(index: usize) -> String {
    format!("${index}")
}

/// The `WHERE` clause of a search and its values.
fn search_conditions(filter: &ItemFilter) -> (String, Vec<Bind>) {
    let mut conditions = Vec::new();
    let mut binds = Vec::new();
    let mut push = |condition: &str, bind: Bind, binds: &mut Vec<Bind>| {
        binds.push(bind);
        conditions.push(condition.replace('?', &placeholder(binds.len())));
    };
    if let Some(status) = filter.status {
        push(
            "status = ?",
            Bind::Text(status.as_str().to_owned()),
            &mut binds,
        );
    }
    if let Some(priority) = filter.priority {
        push(
            "priority = ?",
            Bind::Text(priority.as_str().to_owned()),
            &mut binds,
        );
    }
    if let Some(after) = filter.updated_after_ms {
        push("updated_at >= ?", Bind::Integer(after), &mut binds);
    }
    if let Some(before) = filter.updated_before_ms {
        push("updated_at < ?", Bind::Integer(before), &mut binds);
    }
    if let Some(text) = filter
        .text
        .as_deref()
        .filter(|text| !text.trim().is_empty())
    {
        let pattern = format!("%{}%", escape_like(&text.trim().to_lowercase()));
        binds.push(Bind::Text(pattern));
        let index = placeholder(binds.len());
        conditions.push(format!(
            "(lower(title) LIKE {index} ESCAPE '\\' OR lower(description) LIKE {index} ESCAPE '\\')"
        ));
    }
    let clause = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    (clause, binds)
}

/// The `UPDATE … RETURNING` statement for `patch` over `ids_len` ids, and its values in order.
fn update_statement(ids_len: usize, patch: &ItemPatch, now: i64) -> (String, Vec<Bind>) {
    let mut assignments = Vec::new();
    let mut binds = Vec::new();
    let mut assign = |column: &str, bind: Bind, binds: &mut Vec<Bind>| {
        binds.push(bind);
        assignments.push(format!("{column} = {}", placeholder(binds.len())));
    };
    if let Some(title) = &patch.title {
        assign("title", Bind::Text(title.clone()), &mut binds);
    }
    if let Some(description) = &patch.description {
        assign("description", Bind::Text(description.clone()), &mut binds);
    }
    if let Some(status) = patch.status {
        assign("status", Bind::Text(status.as_str().to_owned()), &mut binds);
    }
    if let Some(priority) = patch.priority {
        assign(
            "priority",
            Bind::Text(priority.as_str().to_owned()),
            &mut binds,
        );
    }
    if let Some(assignee) = &patch.assignee {
        assign("assignee", Bind::Text(assignee.clone()), &mut binds);
    }
    if let Some(due_date) = patch.due_date {
        assign("due_date", Bind::Text(due_date.to_string()), &mut binds);
    }
    assign("updated_at", Bind::Integer(now), &mut binds);
    match patch.status {
        Some(ItemStatus::Completed) => {
            binds.push(Bind::Integer(now));
            assignments.push(format!(
                "completed_at = COALESCE(completed_at, {})",
                placeholder(binds.len())
            ));
        }
        Some(_) => assignments.push("completed_at = NULL".to_owned()),
        None => {}
    }
    let id_placeholders: Vec<String> = (0..ids_len)
        .map(|offset| placeholder(binds.len() + offset + 1))
        .collect();
    let sql = format!(
        "UPDATE demo_items SET {} WHERE id IN ({}) RETURNING {COLUMNS}",
        assignments.join(", "),
        id_placeholders.join(", ")
    );
    (sql, binds)
}

fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

impl Store {
    /// Inserts `items` unless the demo items were seeded before; returns whether it seeded.
    ///
    /// # Errors
    /// Database failures; nothing is inserted then.
    pub async fn seed_demo_items(&self, items: &[Item]) -> Result<bool> {
        let now = now_ms();
        Ok(on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let claimed = sqlx::query(
                "INSERT INTO settings (key, value, updated_at) VALUES ($1, 'yes', $2) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(SEEDED_KEY)
            .bind(now)
            .execute(&mut *transaction)
            .await?;
            if claimed.rows_affected() == 0 {
                transaction.rollback().await?;
                false
            } else {
                for item in items {
                    insert_item!(item).fetch_one(&mut *transaction).await?;
                }
                transaction.commit().await?;
                true
            }
        }))
    }

    /// Reads one item.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such item.
    pub async fn demo_item(&self, id: &ItemId) -> Result<Item> {
        let sql = format!("SELECT {COLUMNS} FROM demo_items WHERE id = $1");
        let row: Option<ItemRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(&id.0)
                .fetch_optional(pool)
                .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The items matching `filter`, most recently changed first, and how many match in all.
    ///
    /// # Errors
    /// Database failures.
    pub async fn search_demo_items(&self, filter: &ItemFilter) -> Result<ItemPage> {
        let (clause, binds) = search_conditions(filter);
        let (_, count_binds) = search_conditions(filter);
        let sql = format!(
            "SELECT {COLUMNS} FROM demo_items{clause} ORDER BY updated_at DESC, id LIMIT {} OFFSET {}",
            filter.limit, filter.offset
        );
        let count_sql = format!("SELECT COUNT(*) FROM demo_items{clause}");
        let (rows, total): (Vec<ItemRow>, i64) = on_pool!(self, |pool| {
            let rows = bind_all!(sqlx::query_as(&sql), binds)
                .fetch_all(pool)
                .await?;
            let (total,): (i64,) = bind_all!(sqlx::query_as(&count_sql), count_binds)
                .fetch_one(pool)
                .await?;
            (rows, total)
        });
        Ok(ItemPage {
            items: rows
                .into_iter()
                .map(Item::try_from)
                .collect::<Result<_>>()?,
            total,
        })
    }

    /// Stores a new item.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the id is taken.
    pub async fn create_demo_item(&self, item: &Item) -> Result<Item> {
        let row = on_pool!(self, |pool| insert_item!(item).fetch_one(pool).await?);
        row.try_into()
    }

    /// Changes one item at `now` (unix ms).
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such item.
    pub async fn update_demo_item(&self, id: &ItemId, patch: &ItemPatch, now: i64) -> Result<Item> {
        let ids = [id.clone()];
        let mut rows = self.update_items(&ids, patch, now).await?;
        rows.pop().ok_or(StoreError::NotFound)?.try_into()
    }

    /// Deletes one item.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such item.
    pub async fn delete_demo_item(&self, id: &ItemId) -> Result<()> {
        let deleted = self
            .bulk_delete_demo_items(std::slice::from_ref(id))
            .await?;
        if deleted.is_empty() {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Applies `patch` to every item in `ids` in one transaction; returns the changed items
    /// (ids that do not exist are skipped).
    ///
    /// # Errors
    /// Database failures; nothing changes then.
    pub async fn bulk_update_demo_items(
        &self,
        ids: &[ItemId],
        patch: &ItemPatch,
        now: i64,
    ) -> Result<Vec<Item>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.update_items(ids, patch, now).await?;
        rows.into_iter().map(Item::try_from).collect()
    }

    /// Deletes every item in `ids` in one transaction; returns the ids that existed.
    ///
    /// # Errors
    /// Database failures; nothing changes then.
    pub async fn bulk_delete_demo_items(&self, ids: &[ItemId]) -> Result<Vec<ItemId>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders = (1..=ids.len())
            .map(placeholder)
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("DELETE FROM demo_items WHERE id IN ({placeholders}) RETURNING id");
        let deleted: Vec<String> = on_pool!(self, |pool| {
            let mut query = sqlx::query_scalar(&sql);
            for id in ids {
                query = query.bind(&id.0);
            }
            let mut transaction = begin_write(pool).await?;
            let deleted = query.fetch_all(&mut *transaction).await?;
            transaction.commit().await?;
            deleted
        });
        Ok(deleted.into_iter().map(ItemId).collect())
    }

    /// Applies `patch` to the items in `ids` in one transaction; returns the changed rows.
    async fn update_items(
        &self,
        ids: &[ItemId],
        patch: &ItemPatch,
        now: i64,
    ) -> Result<Vec<ItemRow>> {
        let (sql, binds) = update_statement(ids.len(), patch, now);
        Ok(on_pool!(self, |pool| {
            let mut query = bind_all!(sqlx::query_as(&sql), binds);
            for id in ids {
                query = query.bind(&id.0);
            }
            let mut transaction = begin_write(pool).await?;
            let rows = query.fetch_all(&mut *transaction).await?;
            transaction.commit().await?;
            rows
        }))
    }
}
