# Fit a discrete power law with poweRlaw and print one tab-separated line:
# file xmin alpha ntail ks p_gof seconds
# Usage: Rscript powerlaw_compare.R FILE SIMS SEED THREADS
suppressMessages(library(poweRlaw))
a <- commandArgs(trailingOnly = TRUE)
x <- scan(a[1], comment.char = "#", quiet = TRUE)
x <- x[x > 0]
m <- displ$new(x)
t0 <- proc.time()[["elapsed"]]
est <- estimate_xmin(m)
m$setXmin(est)
p <- NA
sims <- as.integer(a[2])
if (sims > 0) {
  bs <- suppressMessages(bootstrap_p(m, no_of_sims = sims, threads = as.integer(a[4]), seed = as.integer(a[3])))
  p <- bs$p
}
cat(sprintf("%s\t%d\t%.4f\t%d\t%.5f\t%s\t%.1f\n", basename(a[1]), as.integer(est$xmin), est$pars,
            as.integer(est$ntail), est$gof, format(p), proc.time()[["elapsed"]] - t0))
