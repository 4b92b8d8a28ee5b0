"""The core models: training and prediction on checked arrays with numpy and scipy only (what
ssvm-train and ssvm-predict run); ssvmlinear's estimators are these models with scikit-learn's
validation and mixins."""
