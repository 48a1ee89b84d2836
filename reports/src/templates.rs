//! The HTML templates (compiled into the binary) and the one environment that renders them.

use crate::error::ReportError;
use minijinja::Environment;
use serde::Serialize;
use std::sync::OnceLock;

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        for (name, text) in [
            ("style.css", include_str!("../templates/style.css")),
            ("report.html", include_str!("../templates/report.html")),
            ("compare.html", include_str!("../templates/compare.html")),
            ("index.html", include_str!("../templates/index.html")),
            ("suite.html", include_str!("../templates/suite.html")),
            ("matrix.html", include_str!("../templates/matrix.html")),
            ("explore.html", include_str!("../templates/explore.html")),
        ] {
            env.add_template(name, text)
                .expect("shipped templates parse (checked by the tests)");
        }
        env
    })
}

/// Renders the template `name` with `ctx`. `.html` templates escape every value unless the
/// template marks it `safe` (only the SVGs we drew).
pub fn render(name: &'static str, ctx: &impl Serialize) -> Result<String, ReportError> {
    env()
        .get_template(name)
        .and_then(|t| t.render(ctx))
        .map_err(|source| ReportError::Template {
            template: name,
            source,
        })
}
