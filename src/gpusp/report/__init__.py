"""Results out: records aggregated into tidy tables (median, IQR, rates) and seaborn figures."""
