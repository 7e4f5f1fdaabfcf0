//! The npm package (owned by the npm work, issue 5).

use crate::util::Result;

/// Builds the npm package into `npm/dist`.
pub(crate) fn build(_args: &[String]) -> Result {
    Err("not yet: the npm package lands with its issue".into())
}
