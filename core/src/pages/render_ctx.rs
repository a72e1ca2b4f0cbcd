//! What a page is rendered with wherever it is shown — at its link, or inside an MCP App's view:
//! its data, its catalog, the person's values and the table state, and the Decline it offers.
//! Where the form posts and its CSRF token are the showing door's to add.

use std::collections::BTreeMap;

use tessera_app::{
    catalog::Catalog,
    render::{DeclineOffer, FormState, RenderCtx},
    tree::PageTree,
};

use super::page::Page;

/// The context `page` (whose stored layout is `tree`) renders in with `catalog`, showing `form`
/// and the tables' `query`; no form action, CSRF token or downloads.
#[must_use]
pub fn page_render_ctx(
    page: &Page,
    tree: &PageTree,
    catalog: Catalog,
    form: FormState,
    query: BTreeMap<String, String>,
) -> RenderCtx {
    let mut ctx = RenderCtx::new(page.data.clone());
    ctx.catalog = catalog;
    ctx.form = form;
    ctx.query = query;
    // Decline is an answer on every page that takes one.
    ctx.decline = page.schema.is_some().then(|| DeclineOffer {
        reason_required: page.decline_reason_required,
        placed: tree.offers_decline(),
    });
    ctx
}
