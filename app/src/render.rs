//! The renderer: one function from a page tree, its data, the catalog and the form state to a view.
//!
//! [`render_tree`] is used unchanged by the server-rendered pages, the component gallery and the
//! chat views. It resolves each node's bindings against the data snapshot, renders the children
//! first and hands them to the component's spec. A broken tree still renders: an unknown
//! component or invalid props become a small visible error box, a node reached twice (several
//! parents, cycles) is shown once, and nesting is cut off at [`MAX_DEPTH`].
//!
//! Every render spends against the context's [`RenderBudget`] (nodes, table rows, bytes; see
//! [`budget`]): at the first overrun the rest of the tree is left out, an alert says why, and a
//! [`BudgetWatch`] provided by whoever renders the document hears of it, so a page is never
//! unbounded work and never silently cut short.
//!
//! Everything model-written or data-bound reaches the HTML through Leptos text nodes and
//! attributes, which escape it; no component here may use `inner_html`.

pub mod budget;

use std::collections::{BTreeMap, BTreeSet};

use leptos::prelude::*;
use serde_json::Value;

use crate::binding::{resolve_props_leaving_arrays, BoundProps};
use crate::catalog::Catalog;
use crate::tree::PageTree;
pub use budget::{BudgetLimit, BudgetWatch, Meter, OverBudget, RenderBudget};

/// The hidden form key that carries the CSRF token.
pub const CSRF_FIELD: &str = "_csrf";
/// The form key of the submit, cancel and decline buttons (`submit`, `cancel` or `decline`).
pub const ACTION_FIELD: &str = "_action";
/// The form key of the reason a Decline carries.
pub const DECLINE_REASON_FIELD: &str = "_reason";
/// How deep nodes may nest before the renderer stops descending.
pub const MAX_DEPTH: usize = 64;

/// What a re-rendered form shows after a rejected submission.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FormState {
    /// The person's submitted raw values by form key, to re-fill the fields after a 422.
    pub values: BTreeMap<String, Vec<String>>,
    /// One message per field name, shown beside the field.
    pub errors: BTreeMap<String, String>,
    /// A message about the whole form, shown at its top.
    pub form_error: Option<String>,
}

impl FormState {
    /// Whether nothing was submitted yet (no values, no errors).
    #[must_use]
    pub fn is_pristine(&self) -> bool {
        self.values.is_empty() && self.errors.is_empty() && self.form_error.is_none()
    }
}

/// Everything a page needs besides its tree.
#[derive(Clone, Debug)]
pub struct RenderCtx {
    /// The page's data snapshot that bindings point into.
    pub data: Value,
    /// The components available to this page.
    pub catalog: Catalog,
    /// Re-fill values and error messages.
    pub form: FormState,
    /// Where the Form posts to; `None` posts to the current URL.
    pub action: Option<String>,
    /// The page's CSRF token, sent back as the hidden [`CSRF_FIELD`].
    pub csrf_token: Option<String>,
    /// The URL prefix download links point under (`{base}/{node}.csv`); `None` disables downloads.
    pub download_base: Option<String>,
    /// The current query string, for table sorting and pagination.
    pub query: BTreeMap<String, String>,
    /// What rendering the tree may cost.
    pub budget: RenderBudget,
    /// The page takes a Decline: its Form ends with the Decline control unless the tree places
    /// a decline Button itself. `None` for pages that take no answer and for previews.
    pub decline: Option<DeclineOffer>,
}

/// How a page offers Decline (see [`RenderCtx::decline`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeclineOffer {
    /// A Decline must say why.
    pub reason_required: bool,
    /// The tree places a Button of kind `decline`, so the Form adds none.
    pub placed: bool,
}

impl RenderCtx {
    /// A context over `data` with the default catalog and nothing else.
    #[must_use]
    pub fn new(data: Value) -> Self {
        Self {
            data,
            catalog: Catalog::defaults(),
            form: FormState::default(),
            action: None,
            csrf_token: None,
            download_base: None,
            query: BTreeMap::new(),
            budget: RenderBudget::DEFAULT,
            decline: None,
        }
    }
}

/// The form state of one field: what the person submitted and what was wrong with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldState {
    /// The submitted raw values, when the form was submitted (re-fill them instead of defaults).
    pub values: Option<Vec<String>>,
    /// The message to show beside the field.
    pub error: Option<String>,
}

impl FieldState {
    /// The last submitted value, if the form was submitted.
    #[must_use]
    pub fn last(&self) -> Option<&str> {
        self.values
            .as_ref()
            .and_then(|values| values.last())
            .map(String::as_str)
    }
}

/// One node being rendered: its id and the page context.
#[derive(Clone, Copy, Debug)]
pub struct NodeCtx<'a> {
    /// The node's id in the tree.
    pub id: &'a str,
    /// The page context.
    pub ctx: &'a RenderCtx,
    /// The node's props as the tree holds them, bindings unresolved.
    pub props: &'a Value,
    /// What the page has spent of its budget; components that write rows charge it.
    pub meter: &'a Meter,
}

impl<'a> NodeCtx<'a> {
    /// The rows the top-level prop `prop` is bound to (`{"$data": "/pointer"}` pointing at an
    /// array), borrowed from the page data; `None` when the prop is absent, literal or bound to
    /// something else. Components list such props in
    /// [`ComponentProps::BY_REFERENCE`](crate::catalog::ComponentProps::BY_REFERENCE).
    #[must_use]
    pub fn bound(&self, prop: &str) -> Option<&'a [Value]> {
        BoundProps {
            props: self.props,
            data: &self.ctx.data,
        }
        .rows(prop)
    }
}

impl NodeCtx<'_> {
    /// An HTML id derived from the node id, unique per node and safe in any attribute.
    #[must_use]
    pub fn dom_id(&self) -> String {
        dom_id(self.id)
    }

    /// The submitted values and the error of the field `name`. Values are only given once the
    /// form was submitted, so a pristine page shows the defaults.
    #[must_use]
    pub fn field(&self, name: &str) -> FieldState {
        let form = &self.ctx.form;
        let submitted = !form.is_pristine();
        FieldState {
            values: submitted.then(|| form.values.get(name).cloned().unwrap_or_default()),
            error: form.errors.get(name).cloned(),
        }
    }
}

/// `t-` plus the node id when it is made of letters, digits, `-` and `_`; otherwise the id with
/// other characters replaced and a hash of the original appended, so ids stay distinct.
#[must_use]
pub fn dom_id(node_id: &str) -> String {
    let clean: String = node_id
        .chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() || character == '-' || character == '_' {
                character
            } else {
                '_'
            }
        })
        .collect();
    if clean == node_id && !clean.is_empty() {
        format!("t-{clean}")
    } else {
        // FNV-1a: a stable, dependency-free hash to keep sanitized ids apart.
        let hash = node_id.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
            (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
        });
        format!("t-{clean}-{hash:08x}")
    }
}

/// Renders `tree` to an HTML fragment in a reactive owner of its own, for whoever needs the
/// markup rather than a view (an MCP App's page). A tree over its budget is an error naming the
/// limit, never a fragment cut short.
///
/// # Errors
/// The budget limit the tree went over.
#[cfg(feature = "ssr")]
pub fn tree_html(tree: &PageTree, ctx: &RenderCtx) -> Result<String, OverBudget> {
    Owner::new().with(|| {
        let watch = BudgetWatch::provide();
        let html = render_tree(tree, ctx).to_html();
        watch.overrun().map_or(Ok(html), Err)
    })
}

/// Renders a page tree. Never panics; see the module docs for how broken trees render and what
/// happens over budget.
#[must_use]
pub fn render_tree(tree: &PageTree, ctx: &RenderCtx) -> AnyView {
    let meter = Meter::new(ctx.budget);
    let mut rendered = BTreeSet::new();
    let has_form = tree.nodes.values().any(|node| node.component == "Form");
    let form_error = if has_form {
        None
    } else {
        ctx.form.form_error.clone()
    };
    let top: Vec<AnyView> = tree
        .top_level()
        .into_iter()
        .map(|id| render_node(tree, ctx, &meter, id, 0, &mut rendered))
        .collect();
    let over = meter.over();
    if let Some(over) = over {
        if let Some(watch) = use_context::<BudgetWatch>() {
            watch.record(over);
        }
    }
    let empty = tree.is_empty();
    view! {
        <div class="space-y-6" data-testid="page-tree">
            {over.map(|over| view! { <OverBudgetBox over/> })}
            {form_error.map(|message| view! { <FormErrorBox message/> })}
            {empty
                .then(|| {
                    view! { <p class="text-slate-600 dark:text-slate-300">"This page is empty."</p> }
                })}
            {top}
        </div>
    }
    .into_any()
}

fn render_node<'a>(
    tree: &'a PageTree,
    ctx: &RenderCtx,
    meter: &Meter,
    id: &'a str,
    depth: usize,
    rendered: &mut BTreeSet<&'a str>,
) -> AnyView {
    let Some((key, node)) = tree.nodes.get_key_value(id) else {
        return ().into_any();
    };
    if !rendered.insert(key.as_str()) || !meter.charge(BudgetLimit::Nodes, 1) {
        return ().into_any();
    }
    let Some(spec) = ctx.catalog.get(&node.component) else {
        return node_error(id, &node.component, "this component is not in the catalog");
    };
    if depth >= MAX_DEPTH {
        return node_error(id, &node.component, "the page nests too deeply");
    }
    let children: Vec<AnyView> = node
        .children
        .iter()
        .map(|child| render_node(tree, ctx, meter, child, depth + 1, rendered))
        .collect();
    // Counted before resolving: a text repeating a placeholder of big data is refused before
    // it is built.
    let size = budget::resolved_size(
        &node.props,
        &ctx.data,
        spec.by_reference,
        meter.remaining_bytes(),
    );
    if !meter.charge(BudgetLimit::Bytes, size) {
        return ().into_any();
    }
    let props = resolve_props_leaving_arrays(&node.props, &ctx.data, spec.by_reference);
    let node_ctx = NodeCtx {
        id: key,
        ctx,
        props: &node.props,
        meter,
    };
    (spec.render)(&node_ctx, &props, children)
}

/// The visible box shown instead of a node that cannot be rendered.
#[must_use]
pub fn node_error(node_id: &str, component: &str, message: &str) -> AnyView {
    let message = format!("Cannot show {component} \u{201c}{node_id}\u{201d}: {message}");
    view! { <AlertBox message test_id="node-error"/> }.into_any()
}

/// The red box of an error message, announced when it appears (`role="alert"`). Every page's
/// error reads the same, in light and dark mode.
#[component]
pub fn AlertBox(
    message: String,
    /// The `data-testid` the tests find it by.
    #[prop(optional)]
    test_id: Option<&'static str>,
    /// The `id` a field's `aria-describedby` names it by.
    #[prop(optional)]
    id: Option<String>,
) -> impl IntoView {
    view! {
        <p
            role="alert"
            id=id
            data-testid=test_id
            class="rounded-md border border-red-300 bg-red-50 p-3 text-sm font-medium text-red-800 dark:border-red-700 dark:bg-red-950 dark:text-red-200"
        >
            {message}
        </p>
    }
}

/// The alert at the top of a page rendered only in part because it went over its budget.
#[component]
pub fn OverBudgetBox(over: OverBudget) -> impl IntoView {
    view! { <AlertBox message=over.to_string() test_id="over-budget"/> }
}

/// The message about the whole form, shown at its top after a rejected submission.
#[component]
pub fn FormErrorBox(message: String) -> impl IntoView {
    view! { <AlertBox message test_id="form-error"/> }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use serde_json::json;

    fn html(tree: &Value, ctx: &RenderCtx) -> Result<String, serde_json::Error> {
        let tree: PageTree = serde_json::from_value(tree.clone())?;
        Ok(Owner::new().with(|| render_tree(&tree, ctx).to_html()))
    }

    #[test]
    fn nodes_render_in_tree_order_with_children_inside_their_parent(
    ) -> Result<(), serde_json::Error> {
        let tree = json!({
            "nodes": {
                "c1": {"component": "Heading", "props": {"text": "First", "level": 1}},
                "c2": {"component": "Card", "props": {"title": "Box"}, "children": ["c3"]},
                "c3": {"component": "Text", "props": {"text": "Inside"}}
            },
            "order": ["c1", "c2"]
        });
        let page = html(&tree, &RenderCtx::new(json!({})))?;
        let first = page.find("First").unwrap_or(usize::MAX);
        let inside = page.find("Inside").unwrap_or(0);
        assert!(first < inside, "{page}");
        assert!(page.contains("<h1"), "{page}");
        Ok(())
    }

    #[test]
    fn an_unknown_component_renders_an_error_box_instead_of_panicking(
    ) -> Result<(), serde_json::Error> {
        let tree = json!({"nodes": {"c1": {"component": "Marquee", "props": {"text": "x"}}}});
        let page = html(&tree, &RenderCtx::new(json!({})))?;
        assert!(page.contains("role=\"alert\""), "{page}");
        assert!(page.contains("Marquee"), "{page}");
        Ok(())
    }

    #[test]
    fn invalid_props_render_an_error_box_naming_the_problem() -> Result<(), serde_json::Error> {
        let tree =
            json!({"nodes": {"c1": {"component": "Heading", "props": {"text": "x", "level": 7}}}});
        let page = html(&tree, &RenderCtx::new(json!({})))?;
        assert!(page.contains("node-error"), "{page}");
        assert!(page.contains("level"), "{page}");
        Ok(())
    }

    #[test]
    fn cycles_and_shared_children_render_each_node_once() -> Result<(), serde_json::Error> {
        let tree = json!({"nodes": {
            "a": {"component": "Card", "children": ["b", "x"]},
            "b": {"component": "Card", "children": ["a", "x"]},
            "x": {"component": "Text", "props": {"text": "Shared once"}},
            "top": {"component": "Container", "children": ["a"]}
        }});
        let page = html(&tree, &RenderCtx::new(json!({})))?;
        assert_eq!(page.matches("Shared once").count(), 1, "{page}");
        Ok(())
    }

    #[test]
    fn an_empty_tree_says_so() -> Result<(), serde_json::Error> {
        let page = html(&json!({"nodes": {}}), &RenderCtx::new(json!({})))?;
        assert!(page.contains("This page is empty."), "{page}");
        Ok(())
    }

    #[test]
    fn a_form_error_without_a_form_is_shown_at_the_top() -> Result<(), serde_json::Error> {
        let mut ctx = RenderCtx::new(json!({}));
        ctx.form.form_error = Some("The link has expired".to_owned());
        let page = html(&json!({"nodes": {"c1": {"component": "Divider"}}}), &ctx)?;
        assert!(page.contains("The link has expired"), "{page}");
        Ok(())
    }

    #[test]
    fn a_tree_over_its_budget_stops_rendering_and_says_which_limit() -> Result<(), serde_json::Error>
    {
        let rows: Vec<Value> = (0..30).map(|n| json!({"n": format!("row{n}")})).collect();
        let tree = json!({"nodes": {
            "a": {"component": "Table", "props": {"rows": {"$data": "/rows"}}},
            "b": {"component": "Table", "props": {"rows": {"$data": "/rows"}}},
            "c": {"component": "Text", "props": {"text": "After the tables"}}
        }, "order": ["a", "b", "c"]});
        let mut ctx = RenderCtx::new(json!({ "rows": rows }));
        ctx.budget.rows = 40;
        let tree: PageTree = serde_json::from_value(tree)?;
        let (page, heard) = Owner::new().with(|| {
            let watch = BudgetWatch::provide();
            let page = render_tree(&tree, &ctx).to_html();
            (page, watch.overrun())
        });
        assert_eq!(
            heard,
            Some(OverBudget {
                limit: BudgetLimit::Rows,
                allowed: 40
            })
        );
        assert_eq!(page.matches(">row").count(), 40, "{page}");
        assert!(!page.contains("After the tables"), "{page}");
        assert!(page.contains("render budget `rows`"), "{page}");
        Ok(())
    }

    #[test]
    fn dom_ids_are_safe_and_distinct() {
        assert_eq!(dom_id("c7"), "t-c7");
        let odd = dom_id("a b\"c");
        assert!(odd.starts_with("t-a_b_c-"), "{odd}");
        assert_ne!(dom_id("a.b"), dom_id("a_b"));
        assert_ne!(dom_id(""), "t-");
    }

    #[test]
    fn deep_nesting_is_cut_off_without_overflowing() -> Result<(), serde_json::Error> {
        let mut nodes = serde_json::Map::new();
        for level in 0..200 {
            nodes.insert(
                format!("n{level}"),
                json!({"component": "Container", "children": [format!("n{}", level + 1)]}),
            );
        }
        nodes.insert(
            "n200".to_owned(),
            json!({"component": "Text", "props": {"text": "bottom"}}),
        );
        let page = html(
            &json!({"nodes": nodes, "order": ["n0"]}),
            &RenderCtx::new(json!({})),
        )?;
        assert!(page.contains("nests too deeply"));
        Ok(())
    }
}
