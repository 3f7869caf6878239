# The discrete log-normal fit of R's poweRlaw on a counts file, above the
# power law's x_min, and its Vuong comparison with the power law: where
# poweRlaw stops on a degenerate likelihood ridge (docs/results-ctmc.md).
# Usage: Rscript powerlaw_lognormal.R FILE
suppressMessages(library(poweRlaw))
x <- scan(commandArgs(trailingOnly = TRUE)[1], comment.char = "#", quiet = TRUE)
x <- x[x > 0]
pl <- displ$new(x)
pl$setXmin(estimate_xmin(pl))
ln <- dislnorm$new(x)
ln$setXmin(pl$getXmin())
ln$setPars(estimate_pars(ln))
cmp <- compare_distributions(pl, ln)
cat(sprintf("xmin %d alpha %.4f | log-normal mu %.2f sigma %.2f loglik %.3f | power law loglik %.3f | Vuong PL vs LN %.3f (p %.3f)\n",
            as.integer(pl$getXmin()), pl$getPars(), ln$getPars()[1], ln$getPars()[2], dist_ll(ln), dist_ll(pl),
            cmp$test_statistic, cmp$p_two_sided))
